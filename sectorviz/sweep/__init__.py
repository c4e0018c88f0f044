"""Sweeps, batches and checks (Qt-free, above the command line module): `sectorviz sweep`
(a pattern's params over ranges -> one report per combination, a chart and a table),
`sectorviz batch` (many patterns -> one table) and `sectorviz check` (a pattern's `expect`
key against its numbers), the points run in a process pool (pool.py) or on a Dask cluster
(cluster.py), as executor.py chooses."""
