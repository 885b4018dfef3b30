"""What leaves the machine: the store's numbers (or a run's) in the formats a site's monitoring
reads. openmetrics.py: the OpenMetrics text of node_exporter's textfile collector;
httpjson.py: JSON records POSTed to an HTTP endpoint (ReFrame's httpjson field names), with
retries and a spool. They read records and analysis, and draw nothing."""
