package state

import "fmt"

// Scope says whether a state is partitioned by key or held per operator subtask.
type Scope uint8

const (
	ScopeKeyed Scope = iota + 1
	ScopeOperator
)

func (s Scope) String() string {
	switch s {
	case ScopeKeyed:
		return "keyed"
	case ScopeOperator:
		return "operator"
	}
	return fmt.Sprintf("scope(%d)", uint8(s))
}

// ParseScope is the inverse of Scope.String.
func ParseScope(s string) (Scope, error) {
	switch s {
	case "keyed":
		return ScopeKeyed, nil
	case "operator":
		return ScopeOperator, nil
	}
	return 0, fmt.Errorf("state: unknown scope %q", s)
}

// Kind is the shape of a state. The names are the ones of the query
// language's state_meta table.
type Kind uint8

const (
	KindValue Kind = iota + 1
	KindList
	KindMap
	KindReducing
	KindAggregating
	KindSplitList
	KindUnionList
	KindBroadcast
	KindTimers
	// KindUnknown is the kind of a state a reader lists without knowing
	// what it is (its meta information could not be read).
	KindUnknown
)

var kindNames = [...]string{
	KindValue:       "value",
	KindList:        "list",
	KindMap:         "map",
	KindReducing:    "reducing",
	KindAggregating: "aggregating",
	KindSplitList:   "split_list",
	KindUnionList:   "union_list",
	KindBroadcast:   "broadcast",
	KindTimers:      "timers",
	KindUnknown:     "unknown",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseKind is the inverse of Kind.String.
func ParseKind(s string) (Kind, error) {
	for k, n := range kindNames {
		if n != "" && n == s {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("state: unknown kind %q", s)
}

// Scope returns the scope states of this kind have.
func (k Kind) Scope() Scope {
	switch k {
	case KindSplitList, KindUnionList, KindBroadcast:
		return ScopeOperator
	}
	return ScopeKeyed
}

// IsList reports whether entries of this kind are list elements (one entry
// per element, the user key holding the element's position).
func (k Kind) IsList() bool { return k == KindList || k == KindSplitList || k == KindUnionList }

// Mode is how operator list state is redistributed on restore; it is also the
// `mode` column of the operator_state table.
func (k Kind) Mode() string {
	switch k {
	case KindSplitList:
		return "split"
	case KindUnionList:
		return "union"
	case KindBroadcast:
		return "broadcast"
	}
	return ""
}

// StateMeta describes one state of one operator: enough to read its entries
// without the job's code. It is registered when the state is declared and
// written into every savepoint.
type StateMeta struct {
	OperatorID   string `json:"operator_id"`
	OperatorName string `json:"operator_name"`
	// OperatorUID is the operator's uid where a reader knows it (a Flink
	// savepoint of version 5+, or named from a compiled SQL plan).
	OperatorUID   string `json:"operator_uid,omitempty"`
	StateName     string `json:"state_name"`
	Scope         Scope  `json:"-"`
	Kind          Kind   `json:"-"`
	KeyType       string `json:"key_type,omitempty"`
	NamespaceType string `json:"namespace_type,omitempty"`
	UserKeyType   string `json:"user_key_type,omitempty"`
	ValueType     string `json:"value_type,omitempty"`
	// Entries and Bytes are filled in by snapshots and catalogs; zero while
	// a state is only declared. Entries counts the state's rows (a list's
	// elements, a map's entries, timers); Bytes is the size of its entries
	// as the snapshot encodes them (key and value bytes, uncompressed).
	Entries int64 `json:"entries"`
	Bytes   int64 `json:"bytes"`
	// EntriesUnknown and BytesUnknown say that a reader does not know the
	// figure (a Flink savepoint too large to count when listed, a state it
	// cannot read): Entries or Bytes is then 0 and means nothing; the query
	// table state_meta shows NULL.
	EntriesUnknown bool `json:"-"`
	BytesUnknown   bool `json:"-"`
	// Status is empty when the state can be read, else why it cannot (an
	// unknown serializer, an unsupported layout): such a state is listed,
	// never silently left out, and queries that need it fail.
	Status string `json:"status,omitempty"`
	// Cause is the error behind Status where a reader has one, marked
	// with its reader's kind (flink.ErrCorrupt, flink.ErrUnsupported), so
	// that an error about the state can say what kind of failure it is.
	Cause error `json:"-"`
}

// QualifiedName is "operator.state", the way people refer to a state.
func (m StateMeta) QualifiedName() string { return m.OperatorName + "." + m.StateName }

// Compatible reports why a restored state cannot be read by a newly declared
// one, or "" when it can.
func (m StateMeta) Compatible(declared StateMeta) string {
	switch {
	case m.Kind != declared.Kind:
		return fmt.Sprintf("kind changed from %s to %s", m.Kind, declared.Kind)
	case m.ValueType != declared.ValueType:
		return fmt.Sprintf("value type changed from %s to %s", m.ValueType, declared.ValueType)
	case m.UserKeyType != declared.UserKeyType:
		return fmt.Sprintf("user key type changed from %s to %s", m.UserKeyType, declared.UserKeyType)
	case m.KeyType != "" && declared.KeyType != "" && m.KeyType != declared.KeyType:
		return fmt.Sprintf("key type changed from %s to %s", m.KeyType, declared.KeyType)
	}
	return ""
}
