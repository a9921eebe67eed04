package profile

// Sheets holds named setting overrides and their association to SURT
// prefixes (Heritrix's sheet overlays).
type Sheets struct{}

func (s Sheets) validate() error { return nil }
