"""A Dask cluster and an S3-compatible server on the loopback, each started once per session.

moto's server mode plays S3; the workers find it through ``AWS_ENDPOINT_URL_S3`` (read by botocore, so by s3fs), set
before the cluster starts so that its worker processes inherit it, with throwaway credentials.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

S3_ENVIRONMENT = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                  "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    saved = {name: os.environ.get(name) for name in [*S3_ENVIRONMENT, "AWS_ENDPOINT_URL_S3"]}
    os.environ.update({**S3_ENVIRONMENT, "AWS_ENDPOINT_URL_S3": endpoint})
    try:
        yield endpoint
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        server.stop()


@pytest.fixture(scope="session")
def dask_scheduler(s3_endpoint: str) -> Iterator[str]:
    """Two single-threaded worker processes (so every task and result crosses a process boundary, pickled)."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="session")
def s3_client(s3_endpoint: str):  # noqa: ANN201 - a boto3 S3 client
    import boto3

    return boto3.client("s3", endpoint_url=s3_endpoint)
