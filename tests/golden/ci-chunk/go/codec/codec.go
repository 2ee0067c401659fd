// Package codec turns values into bytes and back.
package codec

import "encoding/json"

// Encode returns the JSON encoding of v.
func Encode(v any) ([]byte, error) { return json.Marshal(v) }

// Decode parses data into v.
func Decode(data []byte, v any) error { return json.Unmarshal(data, v) }
