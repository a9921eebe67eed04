package messages

import "strings"

// hopLetters lists every hop letter, in the order of section 4.3.
const hopLetters = "REXLPIMS"

// IsHop reports whether s is exactly one hop letter.
func IsHop(s string) bool {
	return len(s) == 1 && strings.IndexByte(hopLetters, s[0]) >= 0
}

// IsHopPath reports whether every character of p is a hop letter ("" is the
// hop path of a seed).
func IsHopPath(p string) bool {
	for i := 0; i < len(p); i++ {
		if strings.IndexByte(hopLetters, p[i]) < 0 {
			return false
		}
	}
	return true
}
