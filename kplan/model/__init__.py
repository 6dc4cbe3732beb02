"""Typed Kubernetes objects, exact quantities and compiled selectors."""
