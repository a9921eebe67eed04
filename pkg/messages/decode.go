package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// describeJSONError rewrites encoding/json errors so they say where in the
// message the problem is (line and column as well as byte offset) and which
// field had the wrong type.
func describeJSONError(b []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := position(b, syn.Offset)
		return fmt.Errorf("invalid JSON at line %d column %d (byte %d): %w", line, col, syn.Offset, err)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		if typ.Field == "" {
			return fmt.Errorf("message is a JSON %s, want an object: %w", typ.Value, err)
		}
		return fmt.Errorf("field %s: got JSON %s, want %s (byte %d): %w", typ.Field, typ.Value, typ.Type, typ.Offset, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("truncated JSON (%d bytes): %w", len(b), err)
	}
	return err
}

// position turns a byte offset into a 1-based line and column.
func position(b []byte, off int64) (line, col int) {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	prefix := b[:off]
	line = bytes.Count(prefix, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(prefix, '\n') + 1)
	return line, col
}

// decodeStrict decodes one JSON value into v, numbers as json.Number (so
// free-form objects keep integer precision), and rejects trailing data.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return describeJSONError(b, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("invalid JSON: data after the message at byte %d", dec.InputOffset())
	}
	return nil
}
