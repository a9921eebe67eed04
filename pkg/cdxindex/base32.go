package cdxindex

// OutbackCDX stores a digest as the bytes its base32 text decodes to
// (Apache Commons Codec, lenient: characters outside the alphabet are
// skipped, lower case is accepted, decoding stops at "=") and writes it back
// with its own encoder, which emits eight characters per five bytes and no
// padding. A SHA-1 digest (20 bytes, 32 characters) round-trips unchanged;
// "-" becomes the empty string; a lower-case digest comes back in upper
// case. Doing the same keeps output identical and stores 20 bytes instead
// of 32 characters.

const base32Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

// base32Value maps a character to its 5-bit value, or -1.
func base32Value(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c - 'a')
	case c >= '2' && c <= '7':
		return int(c-'2') + 26
	}
	return -1
}

// decodeBase32 decodes leniently; the partial byte of a short final group
// is dropped.
func decodeBase32(s string) []byte {
	if s == "" || s == "-" {
		return nil
	}
	out := make([]byte, 0, len(s)*5/8)
	var acc uint64
	var bits uint
	for i := 0; i < len(s); i++ {
		if s[i] == '=' {
			break
		}
		v := base32Value(s[i])
		if v < 0 {
			continue
		}
		acc = acc<<5 | uint64(v)
		bits += 5
		if bits >= 8 {
			bits -= 8
			out = append(out, byte(acc>>bits))
			acc &= 1<<bits - 1
		}
	}
	return out
}

// encodeBase32 writes eight characters for every started group of five
// bytes, zero-filling the last group, as OutbackCDX's Capture.base32Encode.
func encodeBase32(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	out := make([]byte, 0, (len(b)+4)/5*8)
	for i := 0; i < len(b); i += 5 {
		var buf uint64
		for j := 0; j < 5; j++ {
			buf <<= 8
			if i+j < len(b) {
				buf |= uint64(b[i+j])
			}
		}
		for j := 7; j >= 0; j-- {
			out = append(out, base32Alphabet[(buf>>(uint(j)*5))&31])
		}
	}
	return string(out)
}
