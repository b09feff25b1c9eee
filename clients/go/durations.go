package baton

import (
	"fmt"
	"strconv"
	"time"
)

// The API speaks time.Duration; the keyed wire speaks decimal seconds ("30", "0.25", at most 12
// integer and 9 fraction digits) and the session wire whole milliseconds. A Duration is a whole
// number of nanoseconds, so nine fraction digits carry it exactly: no float noise, and a
// positive amount never becomes "0" (which would mean "wait forever" for a wait).

// keyedLeaseText is a keyed lease (> 0) as decimal seconds.
func keyedLeaseText(lease time.Duration) (string, error) {
	if lease <= 0 {
		return "", newError("bad-lease", fmt.Sprintf("bad lease: %v; a duration > 0", lease))
	}
	return secondsText(lease), nil
}

// keyedWaitText is a keyed wait (>= 0) as decimal seconds; 0 is "0", which waits forever.
func keyedWaitText(wait time.Duration) (string, error) {
	if wait < 0 {
		return "", newError("bad-wait", fmt.Sprintf("bad wait: %v; a duration >= 0 (0 waits forever)", wait))
	}
	return secondsText(wait), nil
}

// secondsText writes d >= 0 as exact decimal seconds without trailing zeros: 1500ms -> "1.5",
// 1ns -> "0.000000001", 0 -> "0".
func secondsText(d time.Duration) string {
	whole := int64(d / time.Second)
	frac := int64(d % time.Second)
	if frac == 0 {
		return strconv.FormatInt(whole, 10)
	}
	digits := fmt.Sprintf("%09d", frac)
	end := len(digits)
	for digits[end-1] == '0' {
		end--
	}
	return strconv.FormatInt(whole, 10) + "." + digits[:end]
}

// sessionMillis is a session lease (> 0) in whole milliseconds, rounded up so that a positive
// amount below 1 ms is 1, never 0.
func sessionMillis(lease time.Duration) (int64, error) {
	if lease <= 0 {
		return 0, newError("bad-lease", fmt.Sprintf("bad lease: %v; a duration > 0", lease))
	}
	ms := int64(lease / time.Millisecond)
	if lease%time.Millisecond != 0 {
		ms++
	}
	return ms, nil
}
