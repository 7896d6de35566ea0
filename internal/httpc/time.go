package httpc

import "time"

// ParseTime parses an HTTP-date (RFC 9110 section 5.6.7), as found in
// Retry-After: IMF-fixdate, the obsolete RFC 850 form, or asctime.
func ParseTime(s string) (time.Time, error) {
	var err error
	for _, layout := range []string{
		"Mon, 02 Jan 2006 15:04:05 GMT", // IMF-fixdate
		time.RFC850,                     // Sunday, 06-Nov-94 08:49:37 GMT
		time.ANSIC,                      // Sun Nov  6 08:49:37 1994
	} {
		var t time.Time
		if t, err = time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}
