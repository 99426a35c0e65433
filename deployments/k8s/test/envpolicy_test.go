package k8stest

import "strings"

// optionalEnv says why a variable that binary reads without a default may stay unset: the code
// treats empty as "off" or derives a value. The manifests need not set these; every other
// variable without an envDefault must be set for each binary that reads it. An empty answer
// means required. Keep the reasons true to the code they name.
func optionalEnv(binary, name string) string {
	if binary == "ccadmin" {
		switch name {
		case "USER_URL", "ORDER_URL", "LEAD_URL", "CALL_URL", "AMQP_URL":
			// No tag default: main.go applies its own when they are unset, and empty means
			// "skip that part of the demo data".
			return "ccadmin: unset = its default"
		}
	}
	switch name {
	case "TELEPHONY_PLATFORM_URL", "VOICE_PLATFORM_URL":
		return "gateway health check: empty = that external platform is not configured"
	case "AVATAR_PLACEHOLDER_URL":
		return "user: empty = the built-in placeholder link"
	case "AD_SYSTEMS":
		return "lead setup: empty = lead.DefaultAdSystems"
	case "PPROF_ADDR":
		return "lead setup: empty = no profiling listener (the default, wanted)"
	case "CLOCK_FILE":
		return "lead-api: empty = the real clock (a clock file is for development tests only, refused elsewhere)"
	case "INGEST_QUEUE":
		return "call-ingest: empty = telephony.Queue; set by tests only"
	case "SMTP_HOST", "SMTP_FROM", "SMTP_USERNAME", "SMTP_PASSWORD":
		return "notification-worker: empty SMTP_HOST = e-mail delivery off"
	case "MESSENGER_API_URL", "MESSENGER_BOT_TOKEN":
		return "notification-worker: empty = messenger delivery off"
	}
	if strings.HasPrefix(name, "OTEL_") {
		return "tracing: unset = no span export"
	}
	return ""
}

// readOutsideWorkspace reports whether a variable is read by a library rather than by the
// workspace's code, so that the manifests may set it although no binary names it: the
// OpenTelemetry SDK reads OTEL_* itself (pkg/tracing hands the exporter to it), and Go's
// crypto/x509 reads SSL_CERT_DIR for the trusted certificate authorities (production adds the
// broker's CA that way).
func readOutsideWorkspace(name string) bool {
	return strings.HasPrefix(name, "OTEL_") || name == "SSL_CERT_DIR"
}
