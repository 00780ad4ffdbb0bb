"""``idxadvisor export-script``: a read-only mongosh script for DBAs who cannot let a tool connect.

The script reads what ``analyze --uri`` reads (``listDatabases``, ``listCollections``, ``listIndexes``,
``$indexStats``, ``$collStats``, ``$sample``) and writes, in the directory it runs in:

* ``indexes.json``: the index file of DESIGN.md, each index with its ``$indexStats`` ``accesses``
  (``--indexes indexes.json``);
* ``data/<db>.<collection>.json``: a ``$sample`` of each collection, canonical Extended JSON one document per line
  (``--data data``), and ``data/collstats.json``: each collection's document count, size and average document
  size, which ``--data`` uses to scale samples to their collections, and its write operations since the server
  started (``latencyStats``) with the server's clock, which the index selection turns into write rates.

It sends nothing but reads: no insert, update, delete, index build or drop.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from idxadvisor.ingest.datasets import COLLECTION_STATS_FILE
from idxadvisor.units import mask_secrets

_SCRIPT = """\
// idxadvisor export-script {version}: READ-ONLY. It sends listDatabases, listCollections, listIndexes, $indexStats,
// $collStats and $sample, and writes files in the current directory; it changes nothing on the server.
//   mongosh {uri} --quiet --file idxadvisor-export.js
//   idxadvisor analyze mongod.log --indexes indexes.json --data data
// A database user with the read role (plus clusterMonitor for $indexStats) is enough.
const fs = require('fs');
const path = require('path');
const requested = {databases};
const sampleSize = {sample_size};
const maxTimeMS = {max_time_ms};
const outDir = '.';
const dataDir = path.join(outDir, 'data');
fs.mkdirSync(dataDir, {{ recursive: true }});
const databases = requested.length ? requested : db.adminCommand({{ listDatabases: 1, nameOnly: true }})
  .databases.map((d) => d.name).filter((name) => !['admin', 'local', 'config'].includes(name));
const indexes = {{}};
const collstats = {{}};
for (const name of databases) {{
  const database = db.getSiblingDB(name);
  const infos = database.getCollectionInfos({{ type: 'collection' }}, {{ nameOnly: true, authorizedCollections: true }});
  for (const info of infos) {{
    if (info.name.startsWith('system.')) continue;
    const ns = name + '.' + info.name;
    const collection = database.getCollection(info.name);
    const usage = {{}};
    try {{
      collection.aggregate([{{ $indexStats: {{}} }}], {{ maxTimeMS }}).forEach((s) => {{ usage[s.name] = s.accesses; }});
    }} catch (e) {{
      print('// ' + ns + ': $indexStats refused (' + e.message + '): index usage left out');
    }}
    indexes[ns] = collection.getIndexes().map((index) =>
      usage[index.name] ? Object.assign({{}}, index, {{ accesses: usage[index.name] }}) : index);
    const stats = collection.aggregate([{{ $collStats: {{ storageStats: {{}}, latencyStats: {{}} }} }}],
      {{ maxTimeMS }}).toArray()[0];
    const storage = stats ? stats.storageStats : {{}};
    const writes = stats && stats.latencyStats && stats.latencyStats.writes ? stats.latencyStats.writes.ops : null;
    collstats[ns] = {{ count: storage.count, size: storage.size, avgObjSize: storage.avgObjSize, writes,
      localTime: stats ? stats.localTime : null }};
    const sample = collection.aggregate([{{ $sample: {{ size: sampleSize }} }}], {{ maxTimeMS }}).toArray();
    fs.writeFileSync(path.join(dataDir, ns + '.json'),
      sample.map((document) => EJSON.stringify(document, {{ relaxed: false }})).join('\\n') + '\\n');
    print('// ' + ns + ': ' + indexes[ns].length + ' indexes, ' + sample.length + ' sampled documents');
  }}
}}
fs.writeFileSync(path.join(outDir, 'indexes.json'), EJSON.stringify(indexes, null, 2, {{ relaxed: true }}) + '\\n');
fs.writeFileSync(path.join(dataDir, '{stats_file}'), EJSON.stringify(collstats, null, 2, {{ relaxed: true }}) + '\\n');
"""


def export_script(databases: Sequence[str], sample_size: int, version: str, uri: str | None = None,
                  max_time_ms: int = 30_000) -> str:
    """The script; ``uri`` only appears (its password masked) in the comment saying how to run it."""
    return _SCRIPT.format(version=version, uri=json.dumps(mask_secrets(uri)) if uri else '"mongodb://HOST/"',
                          databases=json.dumps(list(databases)), sample_size=int(sample_size),
                          max_time_ms=int(max_time_ms), stats_file=COLLECTION_STATS_FILE)
