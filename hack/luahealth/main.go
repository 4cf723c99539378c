// Command luahealth runs an Argo CD resource health script the way the Argo CD
// application controller runs one from argocd-cm, so Skylift's tests exercise
// the scripts in the interpreter that will run them in production.
//
//	luahealth SCRIPT.lua [OBJECT.json]   (the object is read from stdin when no file is given)
//
// What is mirrored from Argo CD (util/lua/lua.go, pinned to the gopher-lua and
// gopher-json versions its go.mod uses):
//   - gopher-lua (Lua 5.1) with the standard libraries skipped and only
//     package, base and table opened: the default for argocd-cm scripts
//     (resource.customizations.useOpenLibs.<group>_<kind> unset), so no
//     string or math library. Argo CD also opens a reduced os library
//     (time, date); it is left out here, so a script that touches os fails
//     in the tests rather than in a cluster.
//   - the object becomes the global `obj`: JSON decoded as Kubernetes decodes
//     an unstructured object (integers as int64, other numbers as float64),
//     then converted to Lua tables value by value as Argo CD's decodeValue does.
//   - a one-second execution deadline.
//   - the returned table is encoded with gopher-json and read back as a health
//     status; a status Argo CD does not know becomes Unknown with Argo CD's
//     message; an empty table gives an empty status; nil prints null.
//
// Prints the health status as JSON ({"status": ..., "message": ...}) on
// stdout and exits 0; exits 1 with the error on stderr when the script fails
// or returns something other than a table or nil, as Argo CD reports an error.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	lua "github.com/yuin/gopher-lua"
	luajson "layeh.com/gopher-json"
)

// healthStatus has the JSON shape of gitops-engine's health.HealthStatus.
type healthStatus struct {
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
}

// validStatuses are the codes Argo CD accepts from a health script.
var validStatuses = map[string]bool{
	"Unknown": true, "Progressing": true, "Suspended": true,
	"Healthy": true, "Degraded": true, "Missing": true,
}

const invalidHealthStatus = "Lua returned an invalid health status"

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "luahealth:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) < 1 || len(args) > 2 {
		return errors.New("usage: luahealth SCRIPT.lua [OBJECT.json]")
	}
	script, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	var raw []byte
	if len(args) == 2 {
		raw, err = os.ReadFile(args[1])
	} else {
		raw, err = io.ReadAll(stdin)
	}
	if err != nil {
		return err
	}
	obj, err := decodeObject(raw)
	if err != nil {
		return fmt.Errorf("object: %w", err)
	}
	result, err := executeHealth(obj, string(script))
	if err != nil {
		return err
	}
	out, err := json.Marshal(result)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, string(out))
	return err
}

// decodeObject reads a JSON object the way Kubernetes fills an
// unstructured.Unstructured: integers become int64, other numbers float64.
func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	converted, ok := convertNumbers(obj).(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return converted, nil
}

func convertNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		if f, err := t.Float64(); err == nil {
			return f
		}
		return t.String()
	case []any:
		for i := range t {
			t[i] = convertNumbers(t[i])
		}
		return t
	case map[string]any:
		for k := range t {
			t[k] = convertNumbers(t[k])
		}
		return t
	}
	return v
}

// executeHealth runs script with obj as the global `obj` and interprets what
// it returns as Argo CD's ExecuteHealthLua does. nil means "no status".
func executeHealth(obj map[string]any, script string) (*healthStatus, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, obj))
	if err := l.DoString(script); err != nil {
		return nil, err
	}
	ret := l.Get(-1)
	switch ret.Type() {
	case lua.LTNil:
		return nil, nil
	case lua.LTTable:
	default:
		return nil, fmt.Errorf("expect table output from Lua script, not %s", ret.Type().String())
	}
	encoded, err := luajson.Encode(ret)
	if err != nil {
		return nil, err
	}
	hs := &healthStatus{}
	if err := json.Unmarshal(encoded, hs); err != nil {
		// gopher-json encodes an empty table as an array; Argo CD reads any
		// type mismatch here as an empty status.
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return &healthStatus{}, nil
		}
		return nil, err
	}
	if !validStatuses[hs.Status] {
		return &healthStatus{Status: "Unknown", Message: invalidHealthStatus}, nil
	}
	return hs, nil
}

// toLua converts a decoded JSON value into Lua values as Argo CD does: maps
// become hash tables, slices array tables (a nil element is dropped by
// Append), numbers LNumber, and anything else nil.
func toLua(l *lua.LState, v any) lua.LValue {
	switch t := v.(type) {
	case bool:
		return lua.LBool(t)
	case float64:
		return lua.LNumber(t)
	case int64:
		return lua.LNumber(t)
	case string:
		return lua.LString(t)
	case []any:
		arr := l.CreateTable(len(t), 0)
		for _, item := range t {
			arr.Append(toLua(l, item))
		}
		return arr
	case map[string]any:
		tbl := l.CreateTable(0, len(t))
		for k, item := range t {
			tbl.RawSetH(lua.LString(k), toLua(l, item))
		}
		return tbl
	}
	return lua.LNil
}
