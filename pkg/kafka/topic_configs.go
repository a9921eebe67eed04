package kafka

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// configKind says how a topic config value is checked.
type configKind int

const (
	kindLong configKind = iota // integer, -1 allowed where Kafka allows it
	kindRatio
	kindBool
	kindCompression
	kindCleanupPolicy
	kindTimestampType
	kindText
)

// topicConfigKinds lists Kafka's topic-level configs. A name outside it is
// almost always a typo, which a broker would reject only at apply time.
var topicConfigKinds = map[string]configKind{
	"cleanup.policy":                          kindCleanupPolicy,
	"compression.type":                        kindCompression,
	"compression.gzip.level":                  kindLong,
	"compression.lz4.level":                   kindLong,
	"compression.zstd.level":                  kindLong,
	"delete.retention.ms":                     kindLong,
	"file.delete.delay.ms":                    kindLong,
	"flush.messages":                          kindLong,
	"flush.ms":                                kindLong,
	"follower.replication.throttled.replicas": kindText,
	"index.interval.bytes":                    kindLong,
	"leader.replication.throttled.replicas":   kindText,
	"local.retention.bytes":                   kindLong,
	"local.retention.ms":                      kindLong,
	"max.compaction.lag.ms":                   kindLong,
	"max.message.bytes":                       kindLong,
	"message.timestamp.after.max.ms":          kindLong,
	"message.timestamp.before.max.ms":         kindLong,
	"message.timestamp.type":                  kindTimestampType,
	"min.cleanable.dirty.ratio":               kindRatio,
	"min.compaction.lag.ms":                   kindLong,
	"min.insync.replicas":                     kindLong,
	"preallocate":                             kindBool,
	"remote.storage.enable":                   kindBool,
	"retention.bytes":                         kindLong,
	"retention.ms":                            kindLong,
	"segment.bytes":                           kindLong,
	"segment.index.bytes":                     kindLong,
	"segment.jitter.ms":                       kindLong,
	"segment.ms":                              kindLong,
	"unclean.leader.election.enable":          kindBool,
}

// checkTopicConfig validates one config name and value.
func checkTopicConfig(name, value string) error {
	kind, ok := topicConfigKinds[name]
	if !ok {
		return fmt.Errorf("%s: unknown topic config", name)
	}
	bad := func(want string) error { return fmt.Errorf("%s: %q is not %s", name, value, want) }
	switch kind {
	case kindLong:
		if n, err := strconv.ParseInt(value, 10, 64); err != nil || n < -1 {
			return bad("an integer of -1 or more")
		}
	case kindRatio:
		if f, err := strconv.ParseFloat(value, 64); err != nil || f < 0 || f > 1 {
			return bad("a number from 0 to 1")
		}
	case kindBool:
		if value != "true" && value != "false" {
			return bad("true or false")
		}
	case kindCompression:
		if !slices.Contains([]string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}, value) {
			return bad("one of uncompressed, zstd, lz4, snappy, gzip, producer")
		}
	case kindCleanupPolicy:
		if normalizeCleanupPolicy(value) == "" {
			return bad("delete, compact or compact,delete")
		}
	case kindTimestampType:
		if value != "CreateTime" && value != "LogAppendTime" {
			return bad("CreateTime or LogAppendTime")
		}
	case kindText:
		if value == "" {
			return fmt.Errorf("%s: empty value", name)
		}
	}
	return nil
}

// normalizeCleanupPolicy sorts a cleanup.policy list so "delete,compact" and
// "compact,delete" compare equal; it returns "" if the value is invalid.
func normalizeCleanupPolicy(v string) string {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
		if parts[i] != "delete" && parts[i] != "compact" {
			return ""
		}
	}
	slices.Sort(parts)
	return strings.Join(slices.Compact(parts), ",")
}

// sortedKeys returns a map's keys in order, for stable messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
