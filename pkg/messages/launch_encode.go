package messages

import (
	"encoding/json"
	"slices"
	"strconv"
)

// AppendLaunch appends the message to dst exactly as json.Marshal(l) encodes
// it (Launch.MarshalJSON's shape with <, > and & escaped), without
// json.Marshal's second pass that re-validates and compacts MarshalJSON's
// output. On error dst is returned unchanged with json.Marshal's error.
func AppendLaunch(dst []byte, l Launch) ([]byte, error) {
	n := len(dst)
	// One allocation up front rather than a series of doublings.
	dst = slices.Grow(dst, launchSizeHint)
	dst, err := appendLaunch(dst, l, true)
	if err == nil {
		return dst, nil
	}
	// Only an invalid raw value fails; json.Marshal words the error.
	b, err := json.Marshal(l)
	if err != nil {
		return dst[:n], err
	}
	return append(dst[:n], b...), nil
}

// appendLaunch writes the message as MarshalJSON defines it: the fields in
// struct order, headers {} and sheets [] when empty; escapeHTML as
// json.Marshal adds it.
func appendLaunch(dst []byte, l Launch, escapeHTML bool) ([]byte, error) {
	dst = appendKey(append(dst, '{'), false, "url")
	dst = appendString(dst, l.URL, escapeHTML)
	if l.Method != "" {
		dst = appendString(appendKey(dst, true, "method"), l.Method, escapeHTML)
	}
	dst = appendBool(appendKey(dst, true, "isSeed"), l.IsSeed)
	dst = appendBool(appendKey(dst, true, "forceFetch"), l.ForceFetch)
	dst = appendString(appendKey(dst, true, "hop"), l.Hop, escapeHTML)
	dst = appendString(appendKey(dst, true, "parentUrl"), l.ParentURL, escapeHTML)
	dst = appendKey(dst, true, "parentUrlMetadata")
	dst = appendString(appendKey(append(dst, '{'), false, "pathFromSeed"), l.ParentURLMetadata.PathFromSeed, escapeHTML)
	dst, err := appendHeritable(appendKey(dst, true, "heritableData"), l.ParentURLMetadata.HeritableData, escapeHTML)
	if err != nil {
		return dst, err
	}
	dst = append(dst, '}')
	dst = appendKey(dst, true, "headers")
	if l.Headers == nil {
		dst = append(dst, '{', '}')
	} else {
		dst = appendStringMap(dst, l.Headers, escapeHTML)
	}
	dst = appendKey(dst, true, "sheets")
	if l.Sheets == nil {
		dst = append(dst, '[', ']')
	} else {
		dst = appendStrings(dst, l.Sheets, escapeHTML)
	}
	if len(l.TargetSheet) > 0 {
		if dst, err = appendRawMap(appendKey(dst, true, "targetSheet"), l.TargetSheet, escapeHTML); err != nil {
			return dst, err
		}
	}
	if l.RecrawlInterval != nil {
		dst = strconv.AppendInt(appendKey(dst, true, "recrawlInterval"), *l.RecrawlInterval, 10)
	}
	if l.Timestamp != "" {
		dst = appendString(appendKey(dst, true, "timestamp"), l.Timestamp, escapeHTML)
	}
	return append(dst, '}'), nil
}

// appendHeritable writes heritable data as one JSON object with sorted keys:
// the Extra keys, then the known fields (omitted when empty) in their place,
// a known field winning over an Extra key of the same name.
func appendHeritable(dst []byte, h HeritableData, escapeHTML bool) ([]byte, error) {
	var buf [16]string // sort the few keys on the stack
	keys := buf[:0]
	for k := range h.Extra {
		if !isHeritableKey(k) {
			keys = append(keys, k)
		}
	}
	for _, k := range [...]struct {
		name    string
		present bool
	}{
		{hdSource, h.Source != ""},
		{hdHeritable, h.Heritable != nil},
		{hdRefreshDepth, h.RefreshDepth != nil},
		{hdLaunchTimestamp, h.LaunchTimestamp != ""},
		{hdAnnotations, h.Annotations != nil},
	} {
		if k.present {
			keys = append(keys, k.name)
		}
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	var err error
	for i, k := range keys {
		dst = appendMapKey(dst, i > 0, k, escapeHTML)
		switch k {
		case hdSource:
			dst = appendString(dst, h.Source, escapeHTML)
		case hdHeritable:
			dst = appendStrings(dst, h.Heritable, escapeHTML)
		case hdRefreshDepth:
			dst = strconv.AppendInt(dst, int64(*h.RefreshDepth), 10)
		case hdLaunchTimestamp:
			dst = appendString(dst, h.LaunchTimestamp, escapeHTML)
		case hdAnnotations:
			dst = appendStrings(dst, h.Annotations, escapeHTML)
		default:
			if dst, err = appendRaw(dst, h.Extra[k], escapeHTML); err != nil {
				return dst, err
			}
		}
	}
	return append(dst, '}'), nil
}

func isHeritableKey(k string) bool {
	switch k {
	case hdSource, hdHeritable, hdRefreshDepth, hdLaunchTimestamp, hdAnnotations:
		return true
	}
	return false
}

// launchSizeHint is a starting capacity that holds a typical message.
const launchSizeHint = 512
