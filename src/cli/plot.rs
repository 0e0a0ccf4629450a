//! `compare --plot FILE.svg`: each graph's plans as makespan / ideal against peak / single-stream
//! peak, one panel per graph, the Pareto front (no other plan is both faster and leaner) drawn
//! as a line through filled points. Plain SVG written here; no plotting dependency.

use std::fmt::Write as _;

/// One plan of a graph.
pub struct Point {
    pub label: String,
    /// Makespan over the ideal schedule's.
    pub makespan: f64,
    /// Peak over the single-stream plan's peak.
    pub peak: f64,
    /// auto's choice.
    pub chosen: bool,
}

/// One graph's plans.
pub struct Graph {
    pub name: String,
    pub points: Vec<Point>,
}

const PANEL_W: f64 = 420.0;
const PANEL_H: f64 = 300.0;
const MARGIN_L: f64 = 56.0;
const MARGIN_B: f64 = 40.0;
const MARGIN_T: f64 = 28.0;
const MARGIN_R: f64 = 16.0;

/// Indices of the points on the Pareto front, by peak then makespan: a point is on it when no
/// other point is at most as high in both and lower in one.
pub fn pareto(points: &[Point]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..points.len()).collect();
    idx.sort_by(|&a, &b| {
        points[a]
            .peak
            .total_cmp(&points[b].peak)
            .then(points[a].makespan.total_cmp(&points[b].makespan))
            .then(a.cmp(&b))
    });
    let mut front = Vec::new();
    let mut best = f64::INFINITY;
    for i in idx {
        if points[i].makespan < best {
            best = points[i].makespan;
            front.push(i);
        }
    }
    front
}

/// "Nice" tick values covering `[lo, hi]`.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(t);
        t += step;
    }
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The SVG document: panels two to a row.
pub fn svg(graphs: &[Graph]) -> String {
    let cols = graphs.len().clamp(1, 2);
    let rows = graphs.len().div_ceil(2).max(1);
    let (w, h) = (PANEL_W * cols as f64, PANEL_H * rows as f64 + 30.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r##"<text x="8" y="18" font-size="12">Each plan: makespan / ideal (up) against peak / single-stream peak (right). <tspan fill="#c0392b">● Pareto front</tspan>, ○ other plans, ◎ auto's choice.</text>"##
    );
    for (k, g) in graphs.iter().enumerate() {
        let (ox, oy) = (PANEL_W * (k % 2) as f64, 30.0 + PANEL_H * (k / 2) as f64);
        panel(&mut s, g, ox, oy);
    }
    s.push_str("</svg>\n");
    s
}

fn panel(s: &mut String, g: &Graph, ox: f64, oy: f64) {
    let (x0, x1) = (ox + MARGIN_L, ox + PANEL_W - MARGIN_R);
    let (y0, y1) = (oy + PANEL_H - MARGIN_B, oy + MARGIN_T);
    let fin = |v: f64| v.is_finite();
    let xs: Vec<f64> = g.points.iter().map(|p| p.peak).filter(|v| fin(*v)).collect();
    let ys: Vec<f64> = g.points.iter().map(|p| p.makespan).filter(|v| fin(*v)).collect();
    let range = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min).min(1.0);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max).max(lo + 0.01);
        let pad = (hi - lo) * 0.08;
        (lo - pad, hi + pad)
    };
    let ((xl, xh), (yl, yh)) = (range(&xs), range(&ys));
    let px = |v: f64| x0 + (v - xl) / (xh - xl) * (x1 - x0);
    let py = |v: f64| y0 - (v - yl) / (yh - yl) * (y0 - y1);
    let _ =
        writeln!(s, r#"<text x="{}" y="{}" font-size="13" font-weight="bold">{}</text>"#, x0, oy + 18.0, esc(&g.name));
    let _ = writeln!(
        s,
        r##"<rect x="{x0}" y="{y1}" width="{}" height="{}" fill="none" stroke="#888"/>"##,
        x1 - x0,
        y0 - y1
    );
    for t in ticks(xl, xh) {
        let x = px(t);
        let _ = writeln!(s, r##"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{y1}" stroke="#eee"/>"##);
        let _ = writeln!(s, r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{t:.2}</text>"#, y0 + 14.0);
    }
    for t in ticks(yl, yh) {
        let y = py(t);
        let _ = writeln!(s, r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#eee"/>"##);
        let _ = writeln!(s, r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{t:.3}</text>"#, x0 - 4.0, y + 4.0);
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">peak / single-stream peak</text>"#,
        (x0 + x1) / 2.0,
        y0 + 30.0
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate({:.1},{:.1}) rotate(-90)" text-anchor="middle">makespan / ideal</text>"#,
        ox + 14.0,
        (y0 + y1) / 2.0
    );
    let front = pareto(&g.points);
    let path: Vec<String> =
        front.iter().map(|&i| format!("{:.1},{:.1}", px(g.points[i].peak), py(g.points[i].makespan))).collect();
    if path.len() > 1 {
        let _ =
            writeln!(s, r##"<polyline points="{}" fill="none" stroke="#c0392b" stroke-width="1.5"/>"##, path.join(" "));
    }
    for (i, p) in g.points.iter().enumerate() {
        let (x, y) = (px(p.peak), py(p.makespan));
        let on = front.contains(&i);
        let (fill, stroke) = if on { ("#c0392b", "#c0392b") } else { ("none", "#555") };
        let title = format!("{}: makespan / ideal {:.3}, peak / single {:.3}", p.label, p.makespan, p.peak);
        let _ = writeln!(
            s,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="4" fill="{fill}" stroke="{stroke}"><title>{}</title></circle>"#,
            esc(&title)
        );
        if p.chosen {
            let _ = writeln!(
                s,
                r##"<circle cx="{x:.1}" cy="{y:.1}" r="8" fill="none" stroke="#1f618d" stroke-width="1.5"/>"##
            );
        }
        if on {
            let _ =
                writeln!(s, r##"<text x="{:.1}" y="{:.1}" fill="#c0392b">{}</text>"##, x + 6.0, y - 5.0, esc(&p.label));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(makespan: f64, peak: f64) -> Point {
        Point { label: format!("{makespan}/{peak}"), makespan, peak, chosen: false }
    }

    #[test]
    fn the_front_keeps_only_plans_no_other_beats_in_both() {
        let pts = vec![p(1.2, 1.0), p(1.0, 1.4), p(1.1, 1.1), p(1.15, 1.2), p(1.0, 1.5), p(1.2, 1.0)];
        assert_eq!(pareto(&pts), vec![0, 2, 1]);
        let svg = svg(&[Graph { name: "g<1>".into(), points: pts }]);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<circle").count(), 6);
        assert!(svg.contains("g&lt;1&gt;") && svg.contains("<polyline"));
    }

    #[test]
    fn ticks_cover_the_range() {
        let t = ticks(0.95, 1.42);
        assert!(t.len() >= 3 && t[0] >= 0.95 && *t.last().unwrap() <= 1.42 + 1e-9, "{t:?}");
    }
}
