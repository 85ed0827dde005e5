// The last hour on the bot and route cards: small line charts in plain SVG, one point per
// minute, from /admin/api/{bots,routes}/:name/charts, refreshed every few seconds while
// the page is visible (the page's refresh cycle, which other scripts join). Every point's value is in the DOM too (the line's data-values, a
// data-value and a <title> on each point that is not zero), so it can be read, not only
// seen. Needs admin-kit.js.
(function () {
  'use strict';

  var kit = window.RelaygramAdmin;
  var el = kit.el;

  var SVG_NS = 'http://www.w3.org/2000/svg';
  var REFRESH_MS = 5000;
  var WIDTH = 240;
  var HEIGHT = 56;
  var PAD = 3;
  var PATHS = { bot: '/bots/', route: '/routes/' };
  /** `total`: the chart's caption sums the hour; otherwise it shows the latest value. */
  var CHARTS = [
    { name: 'accepted', title: 'accepted', series: ['accepted'], total: true },
    { name: 'delivered', title: 'delivered', series: ['delivered'], total: true },
    { name: 'failed', title: 'failed attempts', series: ['failed'], total: true },
    { name: 'dead', title: 'dead letters', series: ['dead'], total: true },
    { name: 'queue', title: 'queue depth', series: ['queue'] },
    { name: 'latency', title: 'latency ms p50 / p99', series: ['p50_ms', 'p99_ms'] },
  ];

  function svg(tag, attrs) {
    var node = document.createElementNS(SVG_NS, tag);
    Object.keys(attrs || {}).forEach(function (name) {
      node.setAttribute(name, String(attrs[name]));
    });
    return node;
  }

  function clock(iso) {
    var date = new Date(iso);
    return ('0' + date.getHours()).slice(-2) + ':' + ('0' + date.getMinutes()).slice(-2);
  }

  function seriesOf(buckets, series) {
    return buckets.map(function (bucket) {
      var value = bucket[series];
      return typeof value === 'number' ? value : null;
    });
  }

  function caption(spec, lists) {
    return lists
      .map(function (list) {
        if (spec.total)
          return (
            list.reduce(function (sum, v) {
              return sum + (v || 0);
            }, 0) + ' in the hour'
          );
        for (var i = list.length - 1; i >= 0; i--) if (list[i] !== null) return String(list[i]);
        return '–';
      })
      .join(' / ');
  }

  function chart(spec, buckets) {
    var lists = spec.series.map(function (series) {
      return seriesOf(buckets, series);
    });
    var max = 1;
    lists.forEach(function (list) {
      list.forEach(function (v) {
        if (v !== null && v > max) max = v;
      });
    });
    var step = (WIDTH - 2 * PAD) / Math.max(1, buckets.length - 1);
    function x(i) {
      return (PAD + i * step).toFixed(1);
    }
    function y(v) {
      return (HEIGHT - PAD - (v / max) * (HEIGHT - 2 * PAD)).toFixed(1);
    }
    var plot = svg('svg', {
      viewBox: '0 0 ' + WIDTH + ' ' + HEIGHT,
      width: WIDTH,
      height: HEIGHT,
      role: 'img',
      'aria-label': spec.title + ', last hour, one point a minute',
    });
    plot.appendChild(
      svg('line', { class: 'axis', x1: PAD, y1: HEIGHT - PAD, x2: WIDTH - PAD, y2: HEIGHT - PAD }),
    );
    spec.series.forEach(function (series, s) {
      var list = lists[s];
      var points = [];
      list.forEach(function (v, i) {
        if (v !== null) points.push(x(i) + ',' + y(v));
      });
      plot.appendChild(
        svg('polyline', {
          class: 'line series-' + s,
          points: points.join(' '),
          'data-series': series,
          'data-values': list
            .map(function (v) {
              return v === null ? '' : v;
            })
            .join(','),
        }),
      );
      list.forEach(function (v, i) {
        if (!v) return;
        var point = svg('circle', {
          class: 'point series-' + s,
          cx: x(i),
          cy: y(v),
          r: 1.8,
          'data-series': series,
          'data-minute': buckets[i].at,
          'data-value': v,
        });
        var title = svg('title');
        title.textContent = clock(buckets[i].at) + ' ' + series + ' ' + v;
        point.appendChild(title);
        plot.appendChild(point);
      });
    });
    return el(
      'figure',
      { class: 'chart', 'data-chart': spec.name },
      el('figcaption', null, spec.title, el('span', { class: 'muted' }, caption(spec, lists))),
      plot,
    );
  }

  function draw(block, data) {
    block.textContent = '';
    block.setAttribute('data-from', data.from);
    CHARTS.forEach(function (spec) {
      block.appendChild(chart(spec, data.buckets));
    });
  }

  function load(block) {
    var scope = block.getAttribute('data-scope');
    var name = block.getAttribute('data-name');
    return kit
      .api('GET', PATHS[scope] + encodeURIComponent(name) + '/charts')
      .then(function (data) {
        draw(block, data);
      })
      .catch(kit.fail);
  }

  /** A card's chart block, empty until the next refresh fills it. */
  function chartBlock(scope, name) {
    return el(
      'div',
      { class: 'charts', 'data-scope': scope, 'data-name': name },
      el('p', { class: 'muted' }, 'Last hour: loading…'),
    );
  }

  /** Redraws the charts on screen; nothing while the page is hidden or signed out. */
  function refresh() {
    if (document.visibilityState !== 'visible' || !kit.token()) return Promise.resolve();
    var shown = Array.prototype.filter.call(document.querySelectorAll('.charts'), function (b) {
      return b.offsetParent !== null;
    });
    return Promise.all(shown.map(load));
  }

  /** The page's refresh cycle: the charts, and what other scripts add (kit.everyRefresh). */
  var cycle = [refresh];

  function tick() {
    if (document.visibilityState !== 'visible' || !kit.token()) return;
    cycle.forEach(function (fn) {
      fn();
    });
  }

  setInterval(tick, REFRESH_MS);
  document.addEventListener('visibilitychange', tick);

  kit.chartBlock = chartBlock;
  kit.refreshCharts = refresh;
  kit.everyRefresh = function (fn) {
    cycle.push(fn);
  };
})();
