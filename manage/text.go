package manage

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteSettings prints `vigil get`: one key a line with its value and
// origin. The daemon answers a remote get with it; the CLI prints the
// views the control socket or the state file gave it.
func WriteSettings(w io.Writer, views []SettingView) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tORIGIN")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Key, ShowSetting(v.Value), v.Origin)
	}
	tw.Flush()
}
