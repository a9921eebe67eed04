//go:build !unix

package launcher

import "time"

// cpuTime is not measured off Unix.
func cpuTime() time.Duration { return 0 }
