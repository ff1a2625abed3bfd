"""The SVG builder: escaping, markers, and long series drawn without a point per run."""

from __future__ import annotations

import datetime as dt

from evalops.dashboard import svg

T0 = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
EVIL = '<script>x()</script>" onload="x()'


def _series(n: int, name: str = "v1", notable: set[int] = frozenset()) -> svg.Series:
    return svg.Series(name, [svg.Point(T0 + dt.timedelta(days=i), 0.5 + 0.01 * i, 0.4, 0.6, href=f"/ab/{i}",
                                       title=f"{name} day {i}", notable=i in notable) for i in range(n)])


def test_every_text_is_escaped():
    out = str(svg.line_chart([_series(3, name=EVIL)], [svg.Marker(T0, "promotion", EVIL, href='javascript:x()"')],
                             title=EVIL, y_label=EVIL))
    assert "<script>" not in out and 'onload="x()' not in out and '"javascript:x()""' not in out
    assert "&lt;script&gt;" in out


def test_markers_and_points_are_drawn_with_their_links():
    out = str(svg.line_chart([_series(5)], [svg.Marker(T0 + dt.timedelta(days=2), "kb", "snapshot abc")]))
    assert out.count('class="point"') == 5 and out.count('href="/ab/') == 5
    assert 'class="marker marker-kb"' in out and "knowledge base changed: snapshot abc (2024-05-03)" in out
    assert 'class="band"' in out


def test_a_long_series_keeps_its_notable_points_and_its_last():
    out = str(svg.line_chart([_series(200, notable={10, 50})]))
    assert out.count('class="point"') == 3  # days 10, 50 and the last run
    assert out.count("<polyline") == 1 and "v1: 200 runs" in out


def test_the_histogram_counts_every_value():
    values = [-1.0, -0.5, 0.0, 0.0, 0.25, 1.0]
    out = str(svg.histogram(values, bins=4))
    counts = [int(part.split(": ")[1].split("<")[0]) for part in out.split("<title>")[1:]]
    assert sum(counts) == len(values)


def test_the_y_label_sits_above_the_plot_its_ticks_and_markers():
    import re

    out = str(svg.line_chart([_series(5)], [svg.Marker(T0, "promotion", "first baseline")], y_label="nDCG@10 (gold)"))
    label_y = float(re.search(r'class="axis-label" x="12" y="([\d.]+)"', out).group(1))
    ticks = [float(y) for y in re.findall(r'class="tick" x="[\d.]+" y="([\d.]+)" text-anchor="end"', out)]
    squares = [float(y) for y in re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width="10" height="10"', out)]
    assert ticks and squares
    # a tick's text and a marker's square start below the label's line (12 px text: its top is y - 10)
    assert all(y - 10 > label_y + 2 for y in ticks) and all(y > label_y + 2 for y in squares)


def test_the_share_chart_escapes_source_names_and_titles_each_point_with_its_figures():
    from evalops.dashboard.breakdowns import share_chart

    def row(day: int, source: str, slots: int, shift: float | None) -> dict:
        return {"logical_date": T0 + dt.timedelta(days=day), "source": source, "slots": slots, "total": 40,
                "share": slots / 40, "precision": 0.75, "relevant": 3, "judged": 4, "baseline_share": None,
                "shift": shift, "bound": 0.3}

    out = str(share_chart([row(0, EVIL, 30, None), row(0, "manuals", 10, None), row(1, EVIL, 40, 0.25),
                           row(1, "manuals", 0, None)], "s 2.0: share of each source by day"))
    assert "<script>" not in out and 'onload="x()' not in out and "&lt;script&gt;" in out
    assert out.count('class="point"') == 4 and out.count('class="line"') == 2
    esc = '&lt;script&gt;x()&lt;/script&gt;&#34; onload=&#34;x()'
    assert f"2024-05-02 · {esc}: share 100.0% (40 of 40 slots), precision 0.7500 (3/4), shift +25.0 pt" in out
    assert "2024-05-01 · manuals: share 25.0% (10 of 40 slots), precision 0.7500 (3/4), shift –" in out
    assert share_chart([], "nothing") is None
