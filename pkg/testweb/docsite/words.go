package docsite

// The vocabulary of the prose. It is a few hundred words of the kind
// software documentation uses, so a page has the word frequencies, and so
// the compressibility, of real documentation rather than of repeated
// blocks. None of them looks like a URL or a file name, so extractors find
// no links in the text.

var determiners = [...]string{
	"the", "the", "the", "a", "each", "every", "this", "that", "any", "its", "your", "one", "another", "the same",
}

var nouns = [...]string{
	"request", "response", "server", "client", "queue", "worker", "record", "file", "option", "setting",
	"value", "field", "header", "message", "event", "handler", "process", "thread", "buffer", "stream",
	"connection", "session", "token", "user", "account", "role", "policy", "rule", "limit", "timeout",
	"retry", "error", "warning", "log", "metric", "counter", "label", "index", "table", "column",
	"row", "key", "entry", "cache", "store", "snapshot", "backup", "volume", "disk", "node",
	"cluster", "replica", "partition", "segment", "batch", "job", "task", "schedule", "trigger", "hook",
	"plugin", "module", "package", "library", "function", "method", "argument", "parameter", "variable", "constant",
	"type", "interface", "object", "instance", "template", "layout", "page", "section", "chapter", "example",
	"command", "flag", "script", "shell", "terminal", "path", "directory", "archive", "release", "version",
	"upgrade", "migration", "schema", "query", "filter", "result", "report", "dashboard", "alert", "channel",
	"endpoint", "route", "proxy", "gateway", "certificate", "key pair", "secret", "credential", "permission", "group",
	"namespace", "container", "image", "registry", "deployment", "service", "pod", "host", "address", "port",
	"network", "packet", "protocol", "format", "encoding", "payload", "digest", "checksum", "signature", "build",
}

var verbs = [...]string{
	"accept", "add", "allow", "apply", "assign", "build", "call", "cancel", "change", "check",
	"clean", "collect", "compare", "configure", "connect", "contain", "convert", "copy", "create", "decode",
	"define", "delete", "deploy", "describe", "detect", "disable", "enable", "encode", "ensure", "export",
	"extend", "fetch", "filter", "follow", "format", "generate", "handle", "ignore", "import", "include",
	"inspect", "install", "keep", "list", "load", "lock", "log", "mark", "merge", "monitor",
	"move", "open", "override", "parse", "pass", "print", "process", "publish", "read", "receive",
	"record", "reject", "release", "reload", "remove", "rename", "render", "replace", "report", "request",
	"reset", "resolve", "restart", "restore", "retry", "return", "rotate", "run", "save", "scan",
	"schedule", "select", "send", "serve", "set", "share", "show", "skip", "sort", "split",
	"start", "stop", "store", "submit", "support", "sync", "test", "track", "update", "upload",
	"use", "validate", "verify", "wait", "watch", "wrap", "write",
}

// participles maps verbs whose past participle is irregular.
var participles = map[string]string{
	"build": "built", "keep": "kept", "run": "run", "send": "sent", "set": "set",
	"show": "shown", "split": "split", "write": "written", "read": "read",
}

var adjectives = [...]string{
	"default", "current", "previous", "next", "new", "old", "first", "last", "local", "remote",
	"global", "internal", "external", "public", "private", "shared", "single", "multiple", "optional", "required",
	"empty", "full", "large", "small", "long", "short", "fast", "slow", "safe", "secure",
	"valid", "invalid", "active", "idle", "pending", "failed", "successful", "partial", "complete", "temporary",
	"permanent", "static", "dynamic", "primary", "secondary", "minimal", "maximum", "custom", "standard", "separate",
	"existing", "missing", "duplicate", "unique", "specific", "common", "available", "unavailable", "stable", "experimental",
}

var adverbs = [...]string{
	"automatically", "usually", "always", "never", "often", "only", "also", "already", "again", "directly",
	"explicitly", "implicitly", "safely", "quickly", "slowly", "normally", "rarely", "immediately", "eventually", "first",
}

var prepositions = [...]string{
	"in", "on", "for", "with", "from", "to", "by", "after", "before", "during", "without", "through", "across", "per", "under",
}

var subordinators = [...]string{
	"when", "if", "because", "although", "unless", "after", "before", "while", "once", "since", "until",
}

var modals = [...]string{"can", "should", "must", "may", "will", "might", "cannot", "does not"}

var openers = [...]string{
	"Note that", "In practice,", "By default,", "For example,", "In most cases,", "As a rule,", "However,",
	"In addition,", "Otherwise,", "Internally,", "On the other hand,", "In this case,", "At startup,", "Later,",
}
