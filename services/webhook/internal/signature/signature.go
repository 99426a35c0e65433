// Package signature signs webhook deliveries in the Standard Webhooks format
// (https://www.standardwebhooks.com): the receivers' existing libraries verify them.
package signature

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The headers of a signed delivery.
const (
	HeaderID        = "Webhook-Id"
	HeaderTimestamp = "Webhook-Timestamp"
	HeaderSignature = "Webhook-Signature"
)

// secretPrefix marks a Standard Webhooks secret; the rest is the key in base64.
const secretPrefix = "whsec_"

// secretBytes is the key length: 32 bytes, the HMAC-SHA256 block's half, as common providers use.
const secretBytes = 32

// NewSecret is a fresh random secret, "whsec_" and the key in base64.
func NewSecret() (string, error) {
	key := make([]byte, secretBytes)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("new secret: %w", err)
	}
	return secretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// key is the HMAC key of a secret.
func key(secret string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil || len(k) == 0 {
		return nil, errors.New("signature: malformed secret")
	}
	return k, nil
}

// Sign is the v1 signature of body sent as message id at ts under secret: base64 of
// HMAC-SHA256(key, "id.timestamp.body"), prefixed "v1,".
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	k, err := key(secret)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// Headers are the three headers of a delivery signed by every secret in secrets (the current one
// and, during a rotation, the previous one), space-separated as the format allows.
func Headers(secrets []string, id string, ts time.Time, body []byte) (map[string]string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		sig, err := Sign(s, id, ts, body)
		if err != nil {
			return nil, err
		}
		sigs = append(sigs, sig)
	}
	return map[string]string{
		HeaderID:        id,
		HeaderTimestamp: strconv.FormatInt(ts.Unix(), 10),
		HeaderSignature: strings.Join(sigs, " "),
	}, nil
}
