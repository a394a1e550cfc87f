"""The HTML bound report: the page and its SVG plots."""
