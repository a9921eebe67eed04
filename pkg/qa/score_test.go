package qa

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pngOf is a w×h PNG filled with bg, with the rectangle r painted fg.
func pngOf(t *testing.T, w, h int, bg, fg color.Color, r image.Rectangle) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := bg
			if image.Pt(x, y).In(r) {
				c = fg
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var (
	white = color.NRGBA{255, 255, 255, 255}
	black = color.NRGBA{0, 0, 0, 255}
)

func TestScreenshotMatch(t *testing.T) {
	none := image.Rectangle{}
	tests := []struct {
		name string
		a, b []byte
		want float64
	}{
		{"identical", pngOf(t, 10, 10, white, black, image.Rect(0, 0, 5, 5)), pngOf(t, 10, 10, white, black, image.Rect(0, 0, 5, 5)), 1},
		{"a quarter differs", pngOf(t, 10, 10, white, black, image.Rect(0, 0, 5, 5)), pngOf(t, 10, 10, white, black, none), 0.75},
		// A change far below the threshold is no difference (YIQ delta of
		// 255 vs 250 grey is ~25, the limit at 0.1 is ~352).
		{"below threshold", pngOf(t, 10, 10, white, black, none), pngOf(t, 10, 10, color.NRGBA{250, 250, 250, 255}, black, none), 1},
		// Mid grey against white is well over it.
		{"over threshold", pngOf(t, 10, 10, white, black, none), pngOf(t, 10, 10, color.NRGBA{128, 128, 128, 255}, black, none), 0},
		// Transparent is white, as pixelmatch blends it.
		{"transparent is white", pngOf(t, 4, 4, color.NRGBA{0, 0, 0, 0}, black, none), pngOf(t, 4, 4, white, black, none), 1},
		// The part only the taller image has differs.
		{"sizes differ", pngOf(t, 10, 10, white, black, none), pngOf(t, 10, 20, white, black, none), 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ScreenshotMatch(tc.a, tc.b, PixelThreshold)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("match %v, want %v", got, tc.want)
			}
		})
	}
}

func TestScreenshotMatchBadInput(t *testing.T) {
	good := pngOf(t, 2, 2, white, black, image.Rectangle{})
	for _, tc := range []struct {
		name, want string
		a, b       []byte
	}{
		{"capture not a png", "capture-time screenshot", []byte("not a png"), good},
		{"replay not a png", "replay screenshot", good, nil},
		{"truncated png", "capture-time screenshot", good[:len(good)/2], good},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ScreenshotMatch(tc.a, tc.b, PixelThreshold); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one naming the %s", err, tc.want)
			}
		})
	}
}

func TestGrade(t *testing.T) {
	for _, tc := range []struct {
		score float64
		want  Severity
	}{{0, Severe}, {0.49, Severe}, {0.5, Moderate}, {0.89, Moderate}, {0.9, Good}, {1, Good}} {
		if got := Grade(tc.score); got != tc.want {
			t.Errorf("Grade(%v) = %s, want %s", tc.score, got, tc.want)
		}
	}
}

func TestVisibleText(t *testing.T) {
	doc := `<!DOCTYPE html><html><head><title>T</title><style>p{}</style><script>var x="<p>no</p>"</script></head>
<body><h1>Hello</h1>  <p>big   <b>world</b></p><noscript>off</noscript><template>tpl</template></body></html>`
	if got, want := VisibleText([]byte(doc)), "Hello big world"; got != want {
		t.Errorf("VisibleText = %q, want %q", got, want)
	}
}

func TestTextMatch(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want float64
	}{
		{"", "", 1},
		{"abc", "abc", 1},
		{"abcd", "abce", 0.75},
		{"kitten", "sitting", 1 - 3.0/7},
		{"", "abc", 0},
	} {
		got, how := TextMatch(tc.a, tc.b)
		if math.Abs(got-tc.want) > 1e-9 || how != "chars" {
			t.Errorf("TextMatch(%q, %q) = %v %s, want %v chars", tc.a, tc.b, got, how, tc.want)
		}
	}
}

// Long pages are compared by words, and very long ones by their first
// words, so the table stays within MaxTextCells whatever the length.
func TestTextMatchBoundsItsCost(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet ", 500) // 13,500 characters
	changed := strings.Replace(long, "dolor", "DOLOR", 100)
	got, how := TextMatch(long, changed)
	if how != "words" {
		t.Fatalf("%d characters compared by %s, want words", len(long), how)
	}
	if want := 1 - 100.0/2500; math.Abs(got-want) > 1e-9 {
		t.Errorf("match %v, want %v (100 of 2500 words changed)", got, want)
	}
	huge := strings.Repeat("w ", 600_000)
	got, how = TextMatch(huge, huge+"x")
	if !strings.HasPrefix(how, "first ") || got != 1 {
		t.Errorf("600,000 words: %v by %s, want 1 by first N words", got, how)
	}
}
