package messages

import (
	"bytes"
	"encoding/json"
)

// marshal encodes v without HTML escaping, so URLs keep their "&", "<" and
// ">" as the UK Web Archive's producers write them.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
