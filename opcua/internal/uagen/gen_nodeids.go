package main

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// genNodeIDs writes id/zz_nodeids.go: an untyped constant per row of
// NodeIds.csv and the tables behind id.Name.
//
// Storing the 12,000-odd names as strings would add their ~880 KB to every
// program that calls Name. Instead each name is split, at an underscore,
// into the longest prefix that is itself a node's name (its parent) and the
// rest (its part): Server_ServerStatus_CurrentTime is the part CurrentTime
// under Server_ServerStatus. Parts repeat a lot (EnumStrings,
// InputArguments), so they are stored once each; a node is then its id, its
// parent's index and its part's index. Name binary-searches the id and
// joins the parts on the way up to the root.
func genNodeIDs(s *schema) ([]byte, error) {
	rows := slices.Clone(s.nodeIDs)
	slices.SortFunc(rows, func(a, b nodeIDRow) int { return cmp.Compare(a.id, b.id) })
	index := make(map[string]int, len(rows))
	for i, r := range rows {
		index[r.name] = i
	}

	// Parent and part of each node.
	parent := make([]int, len(rows))
	part := make([]string, len(rows))
	for i, r := range rows {
		parent[i], part[i] = -1, r.name
		for j := len(r.name); ; {
			j = strings.LastIndexByte(r.name[:j], '_')
			if j <= 0 {
				break
			}
			if p, ok := index[r.name[:j]]; ok {
				parent[i], part[i] = p, r.name[j+1:]
				break
			}
		}
	}
	maxDepth := 0
	for i := range rows {
		d := 1
		for p := parent[i]; p >= 0; p = parent[p] {
			d++
		}
		maxDepth = max(maxDepth, d)
	}

	// The distinct parts, sorted, concatenated, with their offsets.
	parts := slices.Clone(part)
	slices.Sort(parts)
	parts = slices.Compact(parts)
	partIndex := make(map[string]int, len(parts))
	offsets := make([]uint64, 0, len(parts)+1)
	var blob strings.Builder
	for i, p := range parts {
		partIndex[p] = i
		offsets = append(offsets, uint64(blob.Len()))
		blob.WriteString(p)
	}
	offsets = append(offsets, uint64(blob.Len()))

	ids := make([]uint64, len(rows))
	parents := make([]uint64, len(rows))
	partOf := make([]uint64, len(rows))
	noParent := uint64(len(rows)) // no valid index; fits the width chosen below
	for i, r := range rows {
		ids[i] = uint64(r.id)
		parents[i] = noParent
		if parent[i] >= 0 {
			parents[i] = uint64(parent[i])
		}
		partOf[i] = uint64(partIndex[part[i]])
	}
	idType := uintType(ids[len(ids)-1])
	parentType := uintType(noParent)
	partType := uintType(uint64(len(parts)))
	offType := uintType(offsets[len(offsets)-1])
	tableBytes := len(rows)*(uintSize(idType)+uintSize(parentType)+uintSize(partType)) +
		len(offsets)*uintSize(offType) + blob.Len()

	e := newEmitter("id", "strings")
	e.p("")
	e.comment("", "The identifiers of the nodes of namespace 0 as listed in NodeIds.csv, named as there, with the NodeClass of each node in a comment. They are untyped, to be used as NodeID.Numeric (namespace 0, numeric identifier).")
	e.p("const (")
	for i, r := range s.nodeIDs {
		if i > 0 {
			// A blank line stops gofmt from aligning the values of
			// consecutive lines to the longest name (up to 150 bytes).
			e.p("")
		}
		e.p("\t%s = %d // %s", r.name, r.id, r.class)
	}
	e.p(")")
	e.p("")
	e.comment("", fmt.Sprintf(`Name returns the name of the node of namespace 0 with the numeric identifier n, as the constant of this package is named ("Server_ServerStatus_CurrentTime" for %d), or "" when NodeIds.csv has no such node.

Cost: a binary search over the %d identifiers, a walk of at most %d parts, and one allocation for the result. The names are stored as a tree of shared prefixes, %d bytes of tables that only programs calling Name link in.`, s.nodeIDByName["Server_ServerStatus_CurrentTime"], len(rows), maxDepth, tableBytes))
	e.p("func Name(n uint32) string {")
	e.p("\tlo, hi := 0, len(nodeIDs)")
	e.p("\tfor lo < hi {")
	e.p("\t\tm := int(uint(lo+hi) >> 1)")
	e.p("\t\tif uint32(nodeIDs[m]) < n {")
	e.p("\t\t\tlo = m + 1")
	e.p("\t\t} else {")
	e.p("\t\t\thi = m")
	e.p("\t\t}")
	e.p("\t}")
	e.p("\tif lo == len(nodeIDs) || uint32(nodeIDs[lo]) != n {")
	e.p("\t\treturn \"\"")
	e.p("\t}")
	e.p("\tvar path [%d]%s", maxDepth, partType)
	e.p("\tdepth, size := 0, -1")
	e.p("\tfor i := lo; ; {")
	e.p("\t\tp := nodePart[i]")
	e.p("\t\tpath[depth] = p")
	e.p("\t\tdepth++")
	e.p("\t\tsize += 1 + int(partOffset[p+1]-partOffset[p])")
	e.p("\t\tif nodeParent[i] == noParent {")
	e.p("\t\t\tbreak")
	e.p("\t\t}")
	e.p("\t\ti = int(nodeParent[i])")
	e.p("\t}")
	e.p("\tvar b strings.Builder")
	e.p("\tb.Grow(size)")
	e.p("\tfor depth > 0 {")
	e.p("\t\tdepth--")
	e.p("\t\tp := path[depth]")
	e.p("\t\tb.WriteString(partText[partOffset[p]:partOffset[p+1]])")
	e.p("\t\tif depth > 0 {")
	e.p("\t\t\tb.WriteByte('_')")
	e.p("\t\t}")
	e.p("\t}")
	e.p("\treturn b.String()")
	e.p("}")
	e.p("")
	e.p("// noParent is the nodeParent of a node whose name has no parent.")
	e.p("const noParent = %d", noParent)
	e.p("")
	e.p("// nodeIDs holds the identifiers of NodeIds.csv in increasing order.")
	emitUints(e, "nodeIDs", idType, ids)
	e.p("")
	e.p("// nodeParent holds, per node, the index of the node whose name is the")
	e.p("// longest prefix of its name (up to an underscore), or noParent.")
	emitUints(e, "nodeParent", parentType, parents)
	e.p("")
	e.p("// nodePart holds, per node, the index of the rest of its name.")
	emitUints(e, "nodePart", partType, partOf)
	e.p("")
	e.p("// partOffset[p] and partOffset[p+1] delimit part p in partText.")
	emitUints(e, "partOffset", offType, offsets)
	e.p("")
	e.p("// partText holds the distinct parts of the names, sorted.")
	e.p("const partText = \"\" +")
	var line strings.Builder
	for i, p := range parts {
		line.WriteString(p)
		if line.Len() >= 90 || i == len(parts)-1 {
			sep := " +"
			if i == len(parts)-1 {
				sep = ""
			}
			e.p("\t%q%s", line.String(), sep)
			line.Reset()
		}
	}
	return e.source()
}

// uintType returns the smallest unsigned Go type that holds max.
func uintType(max uint64) string {
	switch {
	case max <= 0xFF:
		return "uint8"
	case max <= 0xFFFF:
		return "uint16"
	case max <= 0xFFFFFFFF:
		return "uint32"
	}
	return "uint64"
}

func uintSize(t string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(t, "uint"))
	return n / 8
}

// emitUints writes var name = [...]typ{vs...}, 16 values a line.
func emitUints(e *emitter, name, typ string, vs []uint64) {
	e.p("var %s = [...]%s{", name, typ)
	var line strings.Builder
	for i, v := range vs {
		if i%16 == 0 {
			line.WriteString("\t")
		} else {
			line.WriteString(" ")
		}
		line.WriteString(strconv.FormatUint(v, 10))
		line.WriteString(",")
		if i%16 == 15 || i == len(vs)-1 {
			e.p("%s", line.String())
			line.Reset()
		}
	}
	e.p("}")
}
