// Package urlfrontierpb holds the URLFrontier API v2 messages and gRPC
// stubs generated from urlfrontier.proto (crawler-commons url-frontier's
// wire contract, with Trawler's comments). Do not edit the .pb.go files:
// change the .proto and run go generate (scripts/install-protoc-gen.sh
// installs the pinned generators; protoc comes from the system).
package urlfrontierpb

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative urlfrontier.proto
