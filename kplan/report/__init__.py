"""Results as versioned documents, explanations, and the texts shown to users."""
