package plan

// YAMLSyntaxError turns a yaml.v3 decoding error of src into an Error at
// the offending line and column, as the plan loader reports its own (other
// YAML files plateau reads — data specs — use it too, so a syntax error
// reads the same everywhere).
func YAMLSyntaxError(name string, src []byte, err error) Error { return *yamlError(name, src, err) }
