"""Production query logs: windowed reading, PII scrubbing, de-duplication, seeded stratified sampling,
implicit-feedback weak judgments and the annotation queue."""

from __future__ import annotations

from evalops.querylog.draw import LogSample, draw_log_sample
from evalops.querylog.feedback import FeedbackPolicy, annotation_queue, weak_judgments, write_annotation_queue
from evalops.querylog.normalize import SamplingUnits, build_units, log_query_id
from evalops.contracts.logrows import row_problems
from evalops.querylog.read import LogWindow, log_partitions, read_log_table, read_log_window
from evalops.querylog.sample import SampleSizePolicy, allocate, seed_for_date, stratified_sample
from evalops.querylog.scrub import PII_KINDS, scrub, scrub_many, scrub_text

__all__ = [
    "LogWindow",
    "read_log_window",
    "read_log_table",
    "log_partitions",
    "row_problems",
    "scrub",
    "scrub_many",
    "scrub_text",
    "PII_KINDS",
    "SamplingUnits",
    "build_units",
    "log_query_id",
    "seed_for_date",
    "SampleSizePolicy",
    "allocate",
    "stratified_sample",
    "FeedbackPolicy",
    "weak_judgments",
    "annotation_queue",
    "write_annotation_queue",
    "LogSample",
    "draw_log_sample",
]
