// Package kafka holds Trawler's thin helpers over franz-go: the client
// configuration every role shares, one place where client options are built,
// synchronous and batched asynchronous producing, a generic at-least-once
// consumer with a dead-letter topic, and declarative topic definitions
// applied idempotently (`trawler topics apply`).
//
// Use franz-go's kgo and kadm directly for anything else; there is no
// interface in front of the client, and tests run against kfake.
package kafka

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Defaults for Config.
const (
	DefaultBrokers  = "127.0.0.1:9092"
	DefaultClientID = "trawler"
)

// Config is the Kafka connection every role shares.
type Config struct {
	// Brokers are the seed brokers, host:port.
	Brokers []string `yaml:"brokers"`
	// ClientID names this client in broker logs and quotas.
	ClientID string `yaml:"clientID"`
	// SessionTimeout is how long a consumer group waits for a member that
	// stopped answering (a killed pod) before it hands its partitions to
	// the others; zero keeps franz-go's default (45 s).
	SessionTimeout time.Duration `yaml:"sessionTimeout"`
	// RebalanceTimeout is how long a group rebalance waits for every
	// member to rejoin (one killed mid-rebalance holds it that long);
	// zero keeps franz-go's default (60 s).
	RebalanceTimeout time.Duration `yaml:"rebalanceTimeout"`
}

// RegisterFlags sets the defaults and registers -kafka (comma-separated
// brokers) and -kafka-client-id on fs.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	c.Brokers = splitBrokers(DefaultBrokers)
	c.ClientID = DefaultClientID
	fs.Var((*brokerList)(&c.Brokers), "kafka", "comma-separated Kafka seed brokers (host:port)")
	fs.StringVar(&c.ClientID, "kafka-client-id", DefaultClientID, "Kafka client id, shown in broker logs and used for quotas")
	fs.DurationVar(&c.SessionTimeout, "kafka-session-timeout", 0,
		"how long a consumer group waits for a member that stopped answering before rebalancing (0: franz-go's 45s)")
	fs.DurationVar(&c.RebalanceTimeout, "kafka-rebalance-timeout", 0,
		"how long a consumer group rebalance waits for its members to rejoin (0: franz-go's 60s)")
}

// Validate checks that there is at least one broker and every broker is a
// usable host:port.
func (c *Config) Validate() error {
	if len(c.Brokers) == 0 {
		return errors.New("kafka: no brokers configured (-kafka host:port[,host:port...])")
	}
	if c.SessionTimeout < 0 || c.RebalanceTimeout < 0 {
		return fmt.Errorf("kafka: session timeout %s or rebalance timeout %s is negative", c.SessionTimeout, c.RebalanceTimeout)
	}
	for i, b := range c.Brokers {
		if err := validateBroker(b); err != nil {
			return fmt.Errorf("kafka: broker %d %q: %w", i+1, b, err)
		}
	}
	return nil
}

// validateBroker checks one host:port.
func validateBroker(b string) error {
	host, port, err := net.SplitHostPort(b)
	if err != nil {
		return fmt.Errorf("want host:port: %w", err)
	}
	if host == "" {
		return errors.New("empty host")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return nil
}

// brokerList is a flag.Value for a comma-separated broker list.
type brokerList []string

// String implements flag.Value.
func (b *brokerList) String() string {
	if b == nil {
		return ""
	}
	return strings.Join(*b, ",")
}

// Set implements flag.Value; a later -kafka replaces, not appends, so an
// environment default can be overridden on the command line.
func (b *brokerList) Set(s string) error {
	*b = splitBrokers(s)
	return nil
}

// splitBrokers splits a comma-separated list, dropping blanks.
func splitBrokers(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
