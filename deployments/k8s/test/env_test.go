package k8stest

import (
	"sort"
	"strings"
	"testing"

	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// envNames are the variables a container gets: its env entries and every key of the ConfigMaps
// and Secrets it takes whole (envFrom, with its prefix). A source outside the render contributes
// what externalSecretKeys says it holds.
func envNames(r *rendered, c corev1.Container) map[string]bool {
	out := map[string]bool{}
	for _, e := range c.Env {
		out[e.Name] = true
	}
	for _, from := range c.EnvFrom {
		var keys []string
		switch {
		case from.ConfigMapRef != nil:
			if cm := configMap(r, from.ConfigMapRef.Name); cm != nil {
				keys = sortedKeys(cm.Data)
			}
		case from.SecretRef != nil:
			keys = secretKeys(r, from.SecretRef.Name)
		}
		for _, k := range keys {
			out[from.Prefix+k] = true
		}
	}
	return out
}

// envValue is the value a container gets for a variable, when the render decides it: a literal,
// or a key of a ConfigMap or Secret in the render.
func envValue(r *rendered, c corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name != name {
			continue
		}
		if e.ValueFrom == nil {
			return e.Value, true
		}
		if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil {
			if cm := configMap(r, ref.Name); cm != nil {
				v, ok := cm.Data[ref.Key]
				return v, ok
			}
		}
		if ref := e.ValueFrom.SecretKeyRef; ref != nil {
			for _, sec := range all[corev1.Secret](r) {
				if v, ok := sec.Data[ref.Key]; ok && sec.Name == ref.Name {
					return string(v), true
				}
			}
		}
		return "", false
	}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef == nil || !strings.HasPrefix(name, from.Prefix) {
			continue
		}
		if cm := configMap(r, from.ConfigMapRef.Name); cm != nil {
			if v, ok := cm.Data[strings.TrimPrefix(name, from.Prefix)]; ok {
				return v, true
			}
		}
	}
	return "", false
}

func configMap(r *rendered, name string) *corev1.ConfigMap {
	for _, cm := range all[corev1.ConfigMap](r) {
		if cm.Name == name {
			return cm
		}
	}
	return nil
}

// secretKeys are the keys of a Secret: from the render, or, for a Secret made outside it, the
// keys it is documented to hold (nil if unknown).
func secretKeys(r *rendered, name string) []string {
	for _, s := range all[corev1.Secret](r) {
		if s.Name == name {
			keys := sortedKeys(s.Data)
			for k := range s.StringData {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return keys
		}
	}
	return externalSecretKeys(r)[name]
}

// externalSecretKeys are the Secrets the render references but does not hold, with their keys:
//   - in production, those made outside git (productionSecrets; deployments/k8s/README.md,
//     "Production"), and each broker User's importCredentialsSecret (rabbitmq-topology.yaml:
//     username, password, and url, the amqps:// URL its binary reads);
//   - <cluster>-app of each CloudNativePG Cluster (the operator's application-user Secret; its
//     key uri is a libpq URL of the primary, cluster-rw);
//   - <cluster>-default-user of each RabbitmqCluster (connection_string is an amqp:// URL).
func externalSecretKeys(r *rendered) map[string][]string {
	out := map[string][]string{}
	if r.flavor() == flavorProduction {
		for name, keys := range productionSecrets() {
			out[name] = keys
		}
		for _, u := range all[rabbitmqUser](r) {
			if ref := u.Spec.ImportCredentialsSecret; ref != nil {
				if _, known := out[ref.Name]; !known {
					out[ref.Name] = []string{"password", "url", "username"}
				}
			}
		}
	}
	for _, c := range cnpgClusters(r) {
		out[c.Name+"-app"] = []string{"dbname", "host", "jdbc-uri", "password", "pgpass", "port", "uri", "user", "username"}
	}
	for _, c := range rabbitmqClusters(r) {
		out[c.Name+"-default-user"] = []string{"connection_string", "default_user.conf", "host", "password", "port", "provider", "type", "username"}
	}
	return out
}

// productionSecrets are the Secrets production takes from outside git besides the broker users'
// (which the render names in its User objects), with their keys. The README's list of what to
// make before production must name each (checkProduction).
func productionSecrets() map[string][]string {
	return map[string][]string{
		"platform-secrets":      {"INTERNAL_TOKEN", "JOB_ID_SECRET"},
		"notification-channels": {"MESSENGER_API_URL", "MESSENGER_BOT_TOKEN", "SMTP_FROM", "SMTP_HOST", "SMTP_PASSWORD", "SMTP_USERNAME"},
		// KEDA's broker user: its credentials (rabbitmq-topology.yaml), host (an amqps:// URL with
		// the broker's full name) and tls ("enable").
		"keda-rabbitmq": {"host", "password", "tls", "username"},
		// The broker's TLS certificate and its CA (cert-manager or by hand).
		"rabbitmq-tls": {"ca.crt", "tls.crt", "tls.key"},
		// The object store's credentials of the database's backups.
		"cc-db-backup": {"ACCESS_KEY_ID", "SECRET_ACCESS_KEY"},
	}
}

// checkEnvRequired: every platform container gets every variable its binary reads that has no
// default (and is not in optionalEnv): a missing one would start the binary on a development
// default, or not at all.
func checkEnvRequired(t *testing.T, s *suite, r *rendered) {
	for _, w := range workloads(r) {
		for _, cc := range containers(w.spec) {
			b := s.binaries[binaryOf(*cc.c)]
			if !isPlatform(*cc.c) || b == nil {
				continue
			}
			got := envNames(r, *cc.c)
			for _, name := range b.required() {
				if !got[name] {
					t.Errorf("%s %s: %s reads %s (%s), which has no default, and the manifest does not set it",
						w, cc.what, b.name, name, b.env[name].where)
				}
			}
		}
	}
}

// checkEnvKnown: every variable a platform container gets is one its own binary reads, so a typo
// (or a setting for another binary) fails here instead of being ignored at run time.
func checkEnvKnown(t *testing.T, s *suite, r *rendered) {
	for _, w := range workloads(r) {
		for _, cc := range containers(w.spec) {
			b := s.binaries[binaryOf(*cc.c)]
			if !isPlatform(*cc.c) || b == nil {
				continue
			}
			for _, name := range sortedKeys(envNames(r, *cc.c)) {
				if b.reads(name) || readOutsideWorkspace(name) {
					continue
				}
				if other := s.readers(name); len(other) > 0 {
					t.Errorf("%s %s: sets %s, which %s does not read (only %v do)", w, cc.what, name, b.name, other)
				} else {
					t.Errorf("%s %s: sets %s, which no binary reads (a typo?)", w, cc.what, name)
				}
			}
		}
	}
}

// checkEnvReferences: every ConfigMap or Secret key a container or KEDA takes exists, in the
// render or among the Secrets made outside it (externalSecretKeys); every key of the render's
// platform ConfigMap is used by someone.
func checkEnvReferences(t *testing.T, s *suite, r *rendered) {
	usedConfig := map[string]map[string]bool{}
	use := func(cm, key string) {
		if usedConfig[cm] == nil {
			usedConfig[cm] = map[string]bool{}
		}
		usedConfig[cm][key] = true
	}
	hasKey := func(keys []string, key string) bool {
		for _, k := range keys {
			if k == key {
				return true
			}
		}
		return false
	}
	for _, w := range workloads(r) {
		for _, cc := range containers(w.spec) {
			for _, e := range cc.c.Env {
				if e.ValueFrom == nil {
					continue
				}
				if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil {
					use(ref.Name, ref.Key)
					cm := configMap(r, ref.Name)
					if cm == nil {
						t.Errorf("%s %s: %s from ConfigMap %s, which the render does not hold", w, cc.what, e.Name, ref.Name)
					} else if _, ok := cm.Data[ref.Key]; !ok {
						t.Errorf("%s %s: %s from ConfigMap %s key %s, which it does not have", w, cc.what, e.Name, ref.Name, ref.Key)
					}
				}
				if ref := e.ValueFrom.SecretKeyRef; ref != nil {
					keys := secretKeys(r, ref.Name)
					if keys == nil {
						t.Errorf("%s %s: %s from Secret %s, which neither the render nor an operator makes", w, cc.what, e.Name, ref.Name)
					} else if !hasKey(keys, ref.Key) {
						t.Errorf("%s %s: %s from Secret %s key %s, which it does not have (%v)", w, cc.what, e.Name, ref.Name, ref.Key, keys)
					}
				}
			}
			for _, from := range cc.c.EnvFrom {
				switch {
				case from.ConfigMapRef != nil:
					cm := configMap(r, from.ConfigMapRef.Name)
					if cm == nil {
						t.Errorf("%s %s: envFrom ConfigMap %s, which the render does not hold", w, cc.what, from.ConfigMapRef.Name)
						continue
					}
					for k := range cm.Data {
						use(cm.Name, k)
					}
				case from.SecretRef != nil:
					if secretKeys(r, from.SecretRef.Name) == nil {
						t.Errorf("%s %s: envFrom Secret %s, which neither the render nor an operator makes", w, cc.what, from.SecretRef.Name)
					}
				}
			}
		}
	}
	for _, ta := range all[kedav1alpha1.TriggerAuthentication](r) {
		for _, ref := range ta.Spec.SecretTargetRef {
			if keys := secretKeys(r, ref.Name); !hasKey(keys, ref.Key) {
				t.Errorf("TriggerAuthentication %s: %s from Secret %s key %s, which does not exist (%v)", ta.Name, ref.Parameter, ref.Name, ref.Key, keys)
			}
		}
	}
	for _, cm := range all[corev1.ConfigMap](r) {
		for _, k := range sortedKeys(cm.Data) {
			if !usedConfig[cm.Name][k] {
				t.Errorf("ConfigMap %s: key %s is used by no container", cm.Name, k)
			}
		}
	}
}

// notificationChannelVars are the settings of notification-worker's external channels: each
// overlay decides them (dev turns both off, production supplies real ones), from a Secret,
// because they hold credentials. Unset, the worker silently skips the channel.
func notificationChannelVars() []string {
	return []string{"SMTP_HOST", "SMTP_FROM", "SMTP_USERNAME", "SMTP_PASSWORD", "MESSENGER_API_URL", "MESSENGER_BOT_TOKEN"}
}

// checkNotificationChannels: notification-worker gets every channel setting, each from a Secret.
func checkNotificationChannels(t *testing.T, s *suite, r *rendered) {
	for _, w := range platformDeployments(r) {
		c := w.spec.Containers[0]
		b := s.binaries[binaryOf(c)]
		if b == nil || b.name != "notification-worker" {
			continue
		}
		for _, name := range notificationChannelVars() {
			if !b.reads(name) {
				t.Errorf("notificationChannelVars: %s does not read %s", b.name, name)
				continue
			}
			fromSecret := false
			for _, e := range c.Env {
				fromSecret = fromSecret || (e.Name == name && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil)
			}
			if !fromSecret {
				t.Errorf("%s: %s not set from a Secret: the channel is skipped, or its credentials sit in plain config", w, name)
			}
		}
	}
}
