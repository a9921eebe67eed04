package messages

import "encoding/json"

// launchKeys are Launch's JSON field names, space-separated.
const launchKeys = "url method isSeed forceFetch hop parentUrl parentUrlMetadata " +
	"headers sheets targetSheet recrawlInterval timestamp"

// fastDecodeLaunch is DecodeLaunch's fast path (see scanner); ok is false
// when the message must go through encoding/json instead.
func fastDecodeLaunch(b []byte) (Launch, bool) {
	return fastDecode(b, launchKeys, (*scanner).launchField)
}

// launchField decodes the value of the field named key into l and returns the
// field's bit for duplicate detection (0 for a key that is not exactly a
// field name; the scanner has then read nothing).
func (s *scanner) launchField(l *Launch, key []byte) uint64 {
	switch string(key) {
	case "url":
		s.nullableString(&l.URL)
		return 1 << 0
	case "method":
		s.nullableString(&l.Method)
		return 1 << 1
	case "isSeed":
		s.nullableBool(&l.IsSeed)
		return 1 << 2
	case "forceFetch":
		s.nullableBool(&l.ForceFetch)
		return 1 << 3
	case "hop":
		s.nullableString(&l.Hop)
		return 1 << 4
	case "parentUrl":
		s.nullableString(&l.ParentURL)
		return 1 << 5
	case "parentUrlMetadata":
		s.parentMetadata(&l.ParentURLMetadata)
		return 1 << 6
	case "headers":
		l.Headers = s.stringMap()
		return 1 << 7
	case "sheets":
		l.Sheets = s.stringList()
		return 1 << 8
	case "targetSheet":
		l.TargetSheet = s.rawMap(nil)
		return 1 << 9
	case "recrawlInterval":
		l.RecrawlInterval = s.nullableInt64()
		return 1 << 10
	case "timestamp":
		s.nullableString(&l.Timestamp)
		return 1 << 11
	}
	return 0
}

// parentMetadata decodes parentUrlMetadata; null leaves p alone.
func (s *scanner) parentMetadata(p *ParentMetadata) {
	if s.literal("null") {
		return
	}
	s.object(func(key []byte) uint64 {
		switch string(key) {
		case "pathFromSeed":
			s.nullableString(&p.PathFromSeed)
			return 1 << 0
		case "heritableData":
			p.HeritableData = s.heritableData()
			return 1 << 1
		}
		if unknownKey(key, "pathFromSeed heritableData") {
			s.skip(0)
		} else {
			s.fail()
		}
		return 0
	})
}

// heritableData decodes as HeritableData.UnmarshalJSON does: the known keys,
// matched exactly, into fields and every other key into Extra.
func (s *scanner) heritableData() HeritableData {
	var h HeritableData
	if s.literal("null") {
		return h
	}
	h.Extra = s.rawMap(func(key []byte) uint64 {
		switch string(key) {
		case hdSource:
			s.nullableString(&h.Source)
			return 1 << 0
		case hdHeritable:
			h.Heritable = s.stringList()
			return 1 << 1
		case hdRefreshDepth:
			if s.literal("null") {
				h.RefreshDepth = nil
			} else {
				d := s.int()
				h.RefreshDepth = &d
			}
			return 1 << 2
		case hdLaunchTimestamp:
			s.nullableString(&h.LaunchTimestamp)
			return 1 << 3
		case hdAnnotations:
			h.Annotations = s.stringList()
			return 1 << 4
		}
		return 0
	})
	if len(h.Extra) == 0 {
		h.Extra = nil
	}
	return h
}

// rawMap decodes an object into a map of copied raw values (nil on null).
// known, when set, takes the keys it returns a bit for; the rest go into
// the map. A repeated key of the map keeps its last value, as in
// encoding/json.
func (s *scanner) rawMap(known func(key []byte) uint64) map[string]json.RawMessage {
	if s.literal("null") {
		return nil
	}
	m := map[string]json.RawMessage{}
	s.object(func(key []byte) uint64 {
		if known != nil {
			if bit := known(key); bit != 0 {
				return bit
			}
		}
		raw := s.raw()
		m[string(key)] = append(json.RawMessage(nil), raw...)
		return 0
	})
	return m
}

// stringMap decodes a map[string]string: nil on null.
func (s *scanner) stringMap() map[string]string {
	if s.literal("null") {
		return nil
	}
	m := map[string]string{}
	s.object(func(key []byte) uint64 {
		m[string(key)] = s.str()
		return 0
	})
	return m
}
