"""Server replies shaped as the MongoDB manual documents them, for the readers' unit tests (values are small and made
up; the field names and nesting follow the pages named above each one)."""

from __future__ import annotations

from datetime import datetime, timezone

from bson import Int64, Timestamp

# https://www.mongodb.com/docs/manual/reference/operator/aggregation/indexStats/ ("Output"): one document per index
INDEX_STATS = [
    {"name": "item_1_quantity_1", "key": {"item": 1, "quantity": 1}, "host": "examplehost.local:27017",
     "accesses": {"ops": Int64(1), "since": datetime(2020, 2, 10, 21, 11, 23, 59000, tzinfo=timezone.utc)},
     "spec": {"v": 2, "key": {"item": 1, "quantity": 1}, "name": "item_1_quantity_1"}},
    {"name": "_id_", "key": {"_id": 1}, "host": "examplehost.local:27017",
     "accesses": {"ops": Int64(0), "since": datetime(2020, 2, 10, 21, 11, 22, 414000, tzinfo=timezone.utc)},
     "spec": {"v": 2, "key": {"_id": 1}, "name": "_id_"}},
]

# https://www.mongodb.com/docs/manual/reference/operator/aggregation/collStats/ ("storageStats Document")
# and ("latencyStats Document"): reads, writes and commands since the server started, each {latency, ops}
COLL_STATS = [{"ns": "test.matrices", "host": "examplehost.local:27017",
               "localTime": datetime(2020, 2, 10, 21, 11, 23, tzinfo=timezone.utc),
               "storageStats": {"size": 608500363, "count": 1104369, "avgObjSize": 550, "storageSize": 352878592,
                                "nindexes": 2, "totalIndexSize": 41883648},
               "latencyStats": {"reads": {"latency": Int64(0), "ops": Int64(0)},
                                "writes": {"latency": Int64(2011), "ops": Int64(1204)},
                                "commands": {"latency": Int64(0), "ops": Int64(0)},
                                "transactions": {"latency": Int64(0), "ops": Int64(0)}}}]

# https://www.mongodb.com/docs/manual/reference/operator/aggregation/queryStats/ ("Untransformed Example" output)
QUERY_STATS = [{
    "key": {
        "queryShape": {"cmdNs": {"db": "test", "coll": "products"}, "command": "find",
                       "filter": {"item": {"$eq": "?string"}}, "sort": {"price": 1}},
        "client": {"driver": {"name": "nodejs|mongosh", "version": "5.1.0"}, "application": {"name": "mongosh 1.10.0"}},
        "collectionType": "collection",
    },
    "keyHash": "dsoJ+LHAru0z6MJ1/IygJnnLTrlpVYYmPnlmNZbZrLI=",
    "queryShapeHash": "4C6EAE8F4E8A7F2DD8F5B5B0D5C7B8AB5D3FF8B7E9F2F2A7BDE4C12F2C9A1F3C",
    "metrics": {
        "lastExecutionMicros": Int64(4254),
        "execCount": Int64(4),
        "totalExecMicros": {"sum": Int64(40000), "max": Int64(25000), "min": Int64(4254),
                            "sumOfSquares": Int64(700000000)},
        "firstResponseExecMicros": {"sum": Int64(40000), "max": Int64(25000), "min": Int64(4254),
                                    "sumOfSquares": Int64(700000000)},
        "docsReturned": {"sum": Int64(8), "max": Int64(2), "min": Int64(2), "sumOfSquares": Int64(16)},
        "keysExamined": {"sum": Int64(0), "max": Int64(0), "min": Int64(0), "sumOfSquares": Int64(0)},
        "docsExamined": {"sum": Int64(400), "max": Int64(100), "min": Int64(100), "sumOfSquares": Int64(40000)},
        "hasSortStage": Int64(4),
        "usedDisk": Int64(0),
        "firstSeenTimestamp": datetime(2023, 9, 14, 12, 30, 27, 989000, tzinfo=timezone.utc),
        "latestSeenTimestamp": datetime(2023, 9, 14, 12, 31, 5, 289000, tzinfo=timezone.utc),
    },
    "asOf": Timestamp(1694695007, 0),
}]
