package promql

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// The recipes are plain YAML files, so a user can read one and copy its
// queries into a plan (docs/monitoring.md lists them).
//
//go:embed recipes/*.yaml
var recipeFS embed.FS

// Recipe is a named set of PromQL queries for a common exporter.
type Recipe struct {
	Description string           `yaml:"description"`
	Queries     map[string]Query `yaml:"queries"`
}

// RecipeNames lists the built-in recipes.
func RecipeNames() []string {
	ents, _ := fs.ReadDir(recipeFS, "recipes")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// RecipeSource returns the YAML text of a recipe.
func RecipeSource(name string) ([]byte, error) {
	b, err := recipeFS.ReadFile("recipes/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("unknown recipe %q (known: %s)", name, strings.Join(RecipeNames(), ", "))
	}
	return b, nil
}

// LoadRecipe parses a built-in recipe; its expressions still hold the
// __FILTER__ and __WINDOW__ placeholders.
func LoadRecipe(name string) (*Recipe, error) {
	b, err := RecipeSource(name)
	if err != nil {
		return nil, err
	}
	var r Recipe
	if err := yaml.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("recipe %s: %w", name, err)
	}
	return &r, nil
}
