// Package buildinfo holds the version stamped into every binary at build time:
//
//	go build -ldflags "-X ccplatform/pkg/buildinfo.Version=v1.2.3" ...
//
// The linker can set only a package-level string variable, which is why this one exists.
package buildinfo

import "runtime/debug"

// Version is the build's version; "dev" when the build did not stamp one.
var Version = "dev"

// Revision is the VCS revision Go recorded in the binary ("" when it recorded none, as with
// -buildvcs=false).
func Revision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}
