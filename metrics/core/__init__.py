"""Foundations shared by every room: the error type, option checks, input readers, atomic writers, intervals, array segments."""
