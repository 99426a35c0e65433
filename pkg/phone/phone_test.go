package phone

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nyaruka/phonenumbers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// libraryNormalize is how numbers were read before Normalizer: libphonenumber's Parse on "+" and the
// digits, IsValidNumber and Format(E164), with the time zones of the parsed number. Normalizer must
// answer exactly as it does.
func libraryNormalize(raw string) (num *phonenumbers.PhoneNumber, e164 string, ok bool) {
	s := separators.Replace(strings.TrimSpace(raw))
	s = strings.TrimPrefix(s, "+")
	if s == "" || len(s) > 15 {
		return nil, "", false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return nil, "", false
		}
	}
	num, err := phonenumbers.Parse("+"+s, "")
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return nil, "", false
	}
	return num, phonenumbers.Format(num, phonenumbers.E164), true
}

// phoneCorpus is every kind of input the create routes may see: each calling code followed by
// digits of every length (random, repeated, starting with 0 or with a national prefix), every
// region's example number of every type and its variants (without +, with separators, a digit
// more or less, a digit changed, the national prefix or a 0 after the calling code), random
// digit strings of every length, and free text that is no number.
func phoneCorpus() []string {
	rng := rand.New(rand.NewPCG(1, 2))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		return string(b)
	}
	var corpus []string
	add := func(s ...string) { corpus = append(corpus, s...) }

	codes := make([]int, 0, len(phonenumbers.GetSupportedCallingCodes()))
	for code := range phonenumbers.GetSupportedCallingCodes() {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	for _, code := range codes {
		cc := strconv.Itoa(code)
		region := phonenumbers.GetRegionCodeForCountryCode(code)
		ndd := phonenumbers.GetNddPrefixForRegion(region, true)
		for n := 0; len(cc)+n <= 16; n++ {
			add("+"+cc+digits(n), cc+digits(n), "+"+cc+digits(n), "+"+cc+strings.Repeat("9", n), "+"+cc+"0"+digits(n))
			for _, lead := range []string{"1", "2", "5", "7", "8", "9", "00", "01", "10", "15", "80", "89", "90"} {
				add("+" + cc + lead + digits(n))
			}
			if ndd != "" {
				add("+"+cc+ndd+digits(n), cc+ndd+digits(n))
			}
		}
	}

	var examples []*phonenumbers.PhoneNumber
	regions := make([]string, 0, len(phonenumbers.GetSupportedRegions()))
	for r := range phonenumbers.GetSupportedRegions() {
		regions = append(regions, r)
	}
	slices.Sort(regions)
	for _, r := range regions {
		for typ := phonenumbers.FIXED_LINE; typ < phonenumbers.UNKNOWN; typ++ {
			if ex := phonenumbers.GetExampleNumberForType(r, typ); ex != nil {
				examples = append(examples, ex)
			}
		}
	}
	for code := range phonenumbers.GetSupportedGlobalNetworkCallingCodes() {
		if ex := phonenumbers.GetExampleNumberForNonGeoEntity(code); ex != nil {
			examples = append(examples, ex)
		}
	}
	for _, ex := range examples {
		e164 := phonenumbers.Format(ex, phonenumbers.E164)
		cc := strconv.Itoa(int(ex.GetCountryCode()))
		nsn := phonenumbers.GetNationalSignificantNumber(ex)
		ndd := phonenumbers.GetNddPrefixForRegion(phonenumbers.GetRegionCodeForNumber(ex), true)
		changed := []byte(nsn)
		changed[len(changed)-1] = '0' + (changed[len(changed)-1]-'0'+1)%10
		add(e164, e164[1:], e164+"0", e164+digits(1), e164[:len(e164)-1],
			"+"+cc+" ("+nsn[:min(3, len(nsn))]+") "+nsn[min(3, len(nsn)):],
			"+"+cc+"-"+nsn, "+"+cc+"."+nsn, "\u00a0+"+cc+"\u00a0"+nsn+" ",
			"+"+cc+string(changed), "+"+cc+"0"+nsn, "+"+cc+ndd+nsn, cc+ndd+nsn, "+"+cc+nsn[1:])
	}

	for n := 1; n <= 16; n++ {
		for range 300 {
			d := digits(n)
			add(d, "+"+d)
		}
	}

	add("", " ", "+", "++79161234567", "+0", "+00", "0079161234567", "+7", "+79", "+791", "+7916",
		"+7 8 916 123 45 67", "+7 (916) 123-45-67", "8 (916) 123-45-67", "+7\t9161234567",
		"+7９１６1234567", "+٧٩١٦١٢٣٤٥٦٧", "+7916123456x", "+79161234567 x123", "+79161234567;ext=12",
		"tel:+79161234567", "+1-800-FLOWERS", "+44 (0) 20 7946 0958", "+390612345678", "+3906",
		"+1 202 555 0123", "+12025550123", "+800 1234 5678", "+882 1234 5678", "+979 123456789",
		"+262 269 61 23 45", "+599 9 123 4567", "+1 (684) 622-1234", "+44 1624 756789")
	return corpus
}

func TestNormalizerMatchesLibrary(t *testing.T) {
	phones := New()
	require.NotEmpty(t, phones.callingCodes, "the calling-code table was built")
	corpus := phoneCorpus()
	var simple, valid int
	for _, raw := range corpus {
		num, want, wantOK := libraryNormalize(raw)
		got, ok := phones.Normalize(raw)
		require.Equal(t, wantOK, ok, "%q valid", raw)
		require.Equal(t, want, got, "%q", raw)
		nilGot, nilOK := (*Normalizer)(nil).Normalize(raw)
		require.Equal(t, wantOK, nilOK, "%q valid without the table", raw)
		require.Equal(t, want, nilGot, "%q without the table", raw)

		if d, isDigits := digitsOf(raw); isDigits {
			if fast, cc, national := phones.simple(d); fast != nil {
				simple++
				parsed, err := phonenumbers.Parse("+"+d, "")
				require.NoError(t, err, "%q is simple, so Parse reads it", raw)
				require.True(t, proto.Equal(parsed, fast), "%q: simple %v, Parse %v", raw, fast, parsed)
				require.Equal(t, phonenumbers.GetNationalSignificantNumber(parsed), national, "%q", raw)
				require.Equal(t, phonenumbers.IsValidNumber(parsed), cc.valid(fast, national), "%q valid", raw)
			}
		}
		if ok {
			valid++
			// UTCOffset reads the zones of the E.164 text, where the number's were read before.
			before, berr := phonenumbers.GetTimezonesForNumber(num)
			after, aerr := phonenumbers.GetTimezonesForPrefix(got)
			require.Equal(t, berr, aerr, "%q", raw)
			require.Equal(t, before, after, "%q", raw)
		}
	}
	t.Logf("%d inputs, %d valid, %d read without Parse", len(corpus), valid, simple)
	// The corpus must exercise both paths, and most valid numbers take the short one.
	assert.Greater(t, len(corpus), 50_000)
	assert.Greater(t, valid, 5_000)
	assert.Greater(t, simple, valid/2)
}

func BenchmarkNormalizePhone(b *testing.B) {
	numbers := make([]string, 1000)
	for i := range numbers {
		numbers[i] = "+7916" + strconv.Itoa(1000000+i*7919%9000000)
	}
	for _, tc := range []struct {
		name   string
		phones *Normalizer
	}{{"library", nil}, {"phones", New()}} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, ok := tc.phones.Normalize(numbers[i%len(numbers)]); !ok {
					b.Fatal(numbers[i%len(numbers)])
				}
			}
		})
	}
}

// winter is an instant with no daylight saving in the northern zones used below.
var winter = time.Date(2027, 1, 15, 12, 0, 0, 0, time.UTC)

func TestInferUTCOffset(t *testing.T) {
	summer := time.Date(2027, 7, 15, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		phone string
		at    time.Time
		want  *int64
	}{
		{"+79161234567", winter, ptr[int64](3)},  // Moscow
		{"+74232123456", winter, ptr[int64](10)}, // Vladivostok
		{"+12125551234", winter, ptr[int64](-5)}, // New York, standard time
		{"+12125551234", summer, ptr[int64](-4)}, // and daylight saving time
		{"+442079460958", summer, ptr[int64](1)}, // London in summer
		{"+919876543210", winter, nil},           // India: +5:30 is not whole hours
		{"+18002752273", winter, nil},            // toll-free: zones of many offsets
	} {
		assert.Equal(t, tc.want, InferUTCOffset(tc.phone, tc.at), tc.phone)
		// A create infers the offset from the number it normalised: the same answer.
		e164, ok := New().Normalize(tc.phone)
		require.True(t, ok, tc.phone)
		assert.Equal(t, tc.want, UTCOffset(e164, tc.at), tc.phone)
	}
}

func ptr[T any](v T) *T { return &v }
