package zyfa_test

import (
	"fmt"

	"zyfa.dev/zyfa"
)

// Causal attention on the CPU backend: V is all ones, so every output is 1.
func Example() {
	const b, s, h, d = 1, 128, 8, 64
	q, v, o := make([]float32, b*s*h*d), make([]float32, b*s*h*d), make([]float32, b*s*h*d)
	for i := range v {
		v[i] = 1
	}
	ctx, err := zyfa.NewContext(&zyfa.ContextOptions{Backend: zyfa.BackendCPU})
	if err != nil {
		panic(err)
	}
	defer ctx.Close()
	qt, _ := zyfa.Float32(q, b, s, h, d)
	vt, _ := zyfa.Float32(v, b, s, h, d)
	ot, _ := zyfa.Float32(o, b, s, h, d)
	if err := ctx.Attention(qt, qt, vt, ot, &zyfa.AttentionOptions{Mask: zyfa.MaskCausal}); err != nil {
		panic(err)
	}
	fmt.Println(o[0], o[len(o)-1])
	// Output: 1 1
}
