package messages

import (
	"encoding/json"
	"math"
	"strconv"
)

// WholeNumber reads an integer from an extra_info value, whichever way it
// was decoded: json.Number (DecodeCrawled), float64 (encoding/json into
// any) or an int type (an event built in process). ok is false for any
// other value, a fraction, or a float beyond exact integers.
func WholeNumber(v any) (n int64, ok bool) {
	switch x := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		return i, err == nil
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, false
		}
		return int64(x), true
	case int:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}
