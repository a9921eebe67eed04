// Package kafkatopics holds Trawler's Kafka topic definitions as data
// (topics.yaml, ARCHITECTURE.md section 3), embedded in the binary so
// `trawler topics apply` and `trawler standalone` work without the source
// tree. pkg/kafka parses and applies them.
package kafkatopics

import _ "embed"

//go:embed topics.yaml
var topicsYAML []byte

// Default returns a copy of the embedded topics.yaml.
func Default() []byte {
	return append([]byte(nil), topicsYAML...)
}
