package messages

// crawledKeys are Crawled's JSON field names, space-separated.
const crawledKeys = "timestamp url status_code size content_length content_digest " +
	"mimetype hop_path via seed host thread start_time_plus_duration " +
	"annotations warc_filename warc_offset warc_length crawl_name extra_info " +
	"content_type warc_type wire_bytes http_method warc_content_type warc_id"

// fastDecodeCrawled is DecodeCrawled's fast path (see scanner); ok is false
// when the message must go through encoding/json instead.
func fastDecodeCrawled(b []byte) (Crawled, bool) {
	return fastDecode(b, crawledKeys, (*scanner).crawledField)
}

// crawledField decodes the value of the field named key into c and returns the
// field's bit for duplicate detection (0 for a key that is not exactly a
// field name; the scanner has then read nothing).
func (s *scanner) crawledField(c *Crawled, key []byte) uint64 {
	switch string(key) {
	case "timestamp":
		s.nullableString(&c.Timestamp)
		return 1 << 0
	case "url":
		s.nullableString(&c.URL)
		return 1 << 1
	case "status_code":
		if !s.literal("null") {
			c.StatusCode = s.int()
		}
		return 1 << 2
	case "size":
		c.Size = s.nullableInt64()
		return 1 << 3
	case "content_length":
		c.ContentLength = s.nullableInt64()
		return 1 << 4
	case "content_digest":
		c.ContentDigest = s.nullableStringPtr()
		return 1 << 5
	case "mimetype":
		s.nullableString(&c.Mimetype)
		return 1 << 6
	case "hop_path":
		s.nullableString(&c.HopPath)
		return 1 << 7
	case "via":
		s.nullableString(&c.Via)
		return 1 << 8
	case "seed":
		s.nullableString(&c.Seed)
		return 1 << 9
	case "host":
		s.nullableString(&c.Host)
		return 1 << 10
	case "thread":
		if !s.literal("null") {
			c.Thread = s.int()
		}
		return 1 << 11
	case "start_time_plus_duration":
		s.nullableString(&c.StartTimePlusDuration)
		return 1 << 12
	case "annotations":
		s.nullableString(&c.Annotations)
		return 1 << 13
	case "warc_filename":
		c.WarcFilename = s.nullableStringPtr()
		return 1 << 14
	case "warc_offset":
		c.WarcOffset = s.nullableInt64()
		return 1 << 15
	case "warc_length":
		c.WarcLength = s.nullableInt64()
		return 1 << 16
	case "crawl_name":
		s.nullableString(&c.CrawlName)
		return 1 << 17
	case "extra_info":
		c.ExtraInfo = s.extraInfo()
		return 1 << 18
	}
	return s.crawledProxyField(c, key)
}

// crawledProxyField decodes the fields a WARC-writing proxy adds.
func (s *scanner) crawledProxyField(c *Crawled, key []byte) uint64 {
	switch string(key) {
	case "content_type":
		s.nullableString(&c.ContentType)
		return 1 << 19
	case "warc_type":
		s.nullableString(&c.WarcType)
		return 1 << 20
	case "wire_bytes":
		c.WireBytes = s.nullableInt64()
		return 1 << 21
	case "http_method":
		s.nullableString(&c.HTTPMethod)
		return 1 << 22
	case "warc_content_type":
		s.nullableString(&c.WarcContentType)
		return 1 << 23
	case "warc_id":
		s.nullableString(&c.WarcID)
		return 1 << 24
	}
	return 0
}

// nullableStringPtr decodes a *string: nil on null.
func (s *scanner) nullableStringPtr() *string {
	if s.literal("null") {
		return nil
	}
	v := s.str()
	return &v
}

// extraInfo decodes extra_info: nil on null, else an object of free-form
// values.
func (s *scanner) extraInfo() map[string]any {
	switch s.peek() {
	case 'n':
		s.want(s.literal("null"))
		return nil
	case '{':
		m, _ := s.value(0).(map[string]any)
		return m
	}
	s.fail()
	return nil
}
