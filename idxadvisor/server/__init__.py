"""Everything that talks to a MongoDB server, read-only: the connection, the read-only source, the readers that
turn what it returns into the pipeline's types (events, index catalog, samples, index usage), and the mongosh script
that reads the same things for DBAs who cannot let a tool connect (DESIGN.md step 8, issue 8).

The only writes the tool ever makes live in ``idxadvisor.replay``, on a scratch database it created.
"""
