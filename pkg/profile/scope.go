package profile

import "errors"

// Scope holds the scope rule parameters, with Heritrix's names and defaults.
// Sheets may override any of them per SURT prefix.
type Scope struct {
	MaxHops int `yaml:"maxHops"`
}

func defaultScope() Scope {
	return Scope{MaxHops: 20}
}

func (s Scope) validate() error {
	if s.MaxHops < 0 {
		return errors.New("scope.maxHops: must be >= 0")
	}
	return nil
}
