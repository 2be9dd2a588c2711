"""The thesis's tables and figures from the experiments' tables, the report pages and the
summary page that shows them all."""
