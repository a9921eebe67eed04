#!/bin/sh
# Installs the protoc plugins that generated pkg/urlfrontier/urlfrontierpb,
# at the versions its .pb.go files name, so a regeneration gives the same
# code. protoc itself comes from the system (Debian: protobuf-compiler).
# CI does not need this: the generated code is committed.
set -eu
go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
