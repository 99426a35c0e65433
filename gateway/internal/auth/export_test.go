package auth

import "context"

// Verify is what Require asks the cache for one key, for the cache's own tests: the owner of key,
// an Unauthorized error for a refused key, or an Unavailable error when the user service cannot
// answer (never cached, so recovery is immediate).
func (c *Cache) Verify(ctx context.Context, key string) (Identity, error) {
	if key == "" {
		return Identity{}, errMissingKey
	}
	v, err := c.verified(ctx, HashKey(key), key)
	if err != nil {
		return Identity{}, err
	}
	return v.id, nil
}

// Len is the number of remembered keys.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
