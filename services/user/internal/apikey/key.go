// Package apikey issues, verifies and revokes the API keys that clients send as X-Api-Key. A key
// is shown once when it is made; only its SHA-256 is stored, so a leaked database leaks no keys.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Scheme starts every key, so that a key is recognisable in configs and secret scanners.
const Scheme = "cck_"

// secretBytes is the entropy of a key: 256 bits, beyond guessing.
const secretBytes = 32

// keyLen is the length of a well-formed key: the scheme and the hex of the secret.
const keyLen = len(Scheme) + 2*secretBytes

// prefixLen is how much of a key is kept in clear, enough to tell keys apart in a listing and far
// too little to help guess the rest.
const prefixLen = len(Scheme) + 8

// Generate makes a new random key.
func Generate() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate key: %w", err)
	}
	return Scheme + hex.EncodeToString(b), nil
}

// Hash is the stored form of a key: the hex SHA-256 of the whole key. A fast hash is enough here
// (no salt, no stretching) because the key is random, not a password someone chose.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Prefix is the part of a key kept in clear for listings.
func Prefix(key string) string {
	if len(key) <= prefixLen {
		return key
	}
	return key[:prefixLen]
}

// WellFormed reports whether key could be a key this package made, so that garbage is refused
// without a database lookup.
func WellFormed(key string) bool {
	if len(key) != keyLen || !strings.HasPrefix(key, Scheme) {
		return false
	}
	for _, c := range key[len(Scheme):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
