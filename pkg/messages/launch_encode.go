package messages

import (
	"slices"
	"strconv"
)

// appendLaunch writes the message as MarshalJSON defines it: the fields in
// struct order, headers {} and sheets [] when empty.
func appendLaunch(dst []byte, l Launch) ([]byte, error) {
	dst = appendKey(append(dst, '{'), false, "url")
	dst = appendString(dst, l.URL)
	if l.Method != "" {
		dst = appendString(appendKey(dst, true, "method"), l.Method)
	}
	dst = appendBool(appendKey(dst, true, "isSeed"), l.IsSeed)
	dst = appendBool(appendKey(dst, true, "forceFetch"), l.ForceFetch)
	dst = appendString(appendKey(dst, true, "hop"), l.Hop)
	dst = appendString(appendKey(dst, true, "parentUrl"), l.ParentURL)
	dst = appendKey(dst, true, "parentUrlMetadata")
	dst = appendString(appendKey(append(dst, '{'), false, "pathFromSeed"), l.ParentURLMetadata.PathFromSeed)
	dst, err := appendHeritable(appendKey(dst, true, "heritableData"), l.ParentURLMetadata.HeritableData)
	if err != nil {
		return dst, err
	}
	dst = append(dst, '}')
	dst = appendKey(dst, true, "headers")
	if l.Headers == nil {
		dst = append(dst, '{', '}')
	} else {
		dst = appendStringMap(dst, l.Headers)
	}
	dst = appendKey(dst, true, "sheets")
	if l.Sheets == nil {
		dst = append(dst, '[', ']')
	} else {
		dst = appendStrings(dst, l.Sheets)
	}
	if len(l.TargetSheet) > 0 {
		if dst, err = appendRawMap(appendKey(dst, true, "targetSheet"), l.TargetSheet); err != nil {
			return dst, err
		}
	}
	if l.RecrawlInterval != nil {
		dst = strconv.AppendInt(appendKey(dst, true, "recrawlInterval"), *l.RecrawlInterval, 10)
	}
	if l.Timestamp != "" {
		dst = appendString(appendKey(dst, true, "timestamp"), l.Timestamp)
	}
	return append(dst, '}'), nil
}

// appendHeritable writes heritable data as one JSON object with sorted keys:
// the Extra keys, then the known fields (omitted when empty) in their place,
// a known field winning over an Extra key of the same name.
func appendHeritable(dst []byte, h HeritableData) ([]byte, error) {
	keys := make([]string, 0, len(h.Extra)+5)
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
		dst = appendMapKey(dst, i > 0, k)
		switch k {
		case hdSource:
			dst = appendString(dst, h.Source)
		case hdHeritable:
			dst = appendStrings(dst, h.Heritable)
		case hdRefreshDepth:
			dst = strconv.AppendInt(dst, int64(*h.RefreshDepth), 10)
		case hdLaunchTimestamp:
			dst = appendString(dst, h.LaunchTimestamp)
		case hdAnnotations:
			dst = appendStrings(dst, h.Annotations)
		default:
			if dst, err = appendRaw(dst, h.Extra[k]); err != nil {
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
