// The Outbox tab's broadcasts: their progress (a stacked bar of sent, blocked and failed
// over the total) and Pause / Resume / Cancel, refreshed with the page's cycle while the
// tab shows, a page of them at a time (Newer / Older). Cards are updated in place, so a
// button is never swapped under a click. Values a reader (or a test) needs are in data-*
// attributes too. Needs admin-kit.js and admin-charts.js (the refresh cycle).
(function () {
  'use strict';

  var kit = window.RelaygramAdmin;
  var $ = kit.$;
  var el = kit.el;
  var say = kit.say;
  var api = kit.api;
  var fail = kit.fail;
  var fields = kit.fields;
  var when = kit.when;

  var SVG_NS = 'http://www.w3.org/2000/svg';
  var LIMIT = 50;
  /** The admin API's BROADCAST_LIST_MAX_OFFSET: it refuses to page further back. */
  var MAX_OFFSET = 10000;
  var PAGE = 20;
  var SEGMENTS = ['sent', 'blocked', 'failed'];
  var ACTIONS = [
    { name: 'pause', label: 'Pause', allowed: ['running'], done: 'Paused' },
    { name: 'resume', label: 'Resume', allowed: ['paused'], done: 'Resumed' },
    { name: 'cancel', label: 'Cancel', allowed: ['running', 'paused'], done: 'Cancelled' },
  ];
  var STATUS_CLASS = { running: 'ok', done: 'ok', paused: 'warn', loading: 'warn' };

  /** Cards by bot/id; `ticks` orders refreshes and actions (an older answer never wins). */
  var rows = {};
  var ticks = 0;
  /** Paging: the page asked for and the page shown (their first broadcast's place in the list). */
  var offset = 0;
  var shownFrom = 0;
  var nextOffset = null;
  var shownTick = 0;

  function short(id) {
    return id.length > 8 ? id.slice(0, 8) : id;
  }

  function path(b) {
    return '/broadcasts/' + encodeURIComponent(b.bot) + '/' + encodeURIComponent(b.id);
  }

  function svg(tag, attrs) {
    var node = document.createElementNS(SVG_NS, tag);
    Object.keys(attrs).forEach(function (name) {
      node.setAttribute(name, String(attrs[name]));
    });
    return node;
  }

  // ---- broadcasts ----

  /** The stacked bar: one rect per outcome, widths in percent of the total. */
  function progressBar() {
    var plot = svg('svg', {
      class: 'stacked',
      viewBox: '0 0 100 10',
      preserveAspectRatio: 'none',
      'aria-hidden': 'true',
      focusable: 'false',
    });
    plot.appendChild(svg('rect', { class: 'track', x: 0, y: 0, width: 100, height: 10 }));
    var rects = {};
    SEGMENTS.forEach(function (name) {
      rects[name] = svg('rect', { class: 'seg ' + name, x: 0, y: 0, width: 0, height: 10 });
      plot.appendChild(rects[name]);
    });
    return { plot: plot, rects: rects };
  }

  function drawBar(bar, b) {
    var x = 0;
    SEGMENTS.forEach(function (name) {
      var width = b.total ? (b[name] / b.total) * 100 : 0;
      bar.rects[name].setAttribute('x', x.toFixed(2));
      bar.rects[name].setAttribute('width', width.toFixed(2));
      bar.rects[name].setAttribute('data-value', b[name]);
      x += width;
    });
  }

  function settled(b) {
    return b.sent + b.blocked + b.failed;
  }

  function countsText(b) {
    return (
      settled(b) +
      ' of ' +
      b.total +
      ' settled: ' +
      b.sent +
      ' sent, ' +
      b.blocked +
      ' blocked, ' +
      b.failed +
      ' failed, ' +
      b.pending +
      ' pending'
    );
  }

  function counts(b) {
    var line = el('p', { class: 'counts' });
    SEGMENTS.forEach(function (name) {
      line.appendChild(el('span', { class: 'count ' + name }, b[name] + ' ' + name));
    });
    line.appendChild(el('span', { class: 'count pending' }, b.pending + ' pending'));
    line.appendChild(el('span', { class: 'muted' }, settled(b) + ' / ' + b.total));
    return line;
  }

  function createRow(first) {
    var row = { current: first, busy: false, after: 0, buttons: {} };
    var title = el('h3');
    var bar = progressBar();
    var meter = el('div', { class: 'progress', role: 'progressbar', 'aria-valuemin': 0 }, bar.plot);
    var countLine = el('div');
    var reason = el('p', { class: 'paused-reason', hidden: true });
    var details = el('dl');
    var actions = el('div', { class: 'actions' });
    ACTIONS.forEach(function (spec) {
      var button = el(
        'button',
        {
          type: 'button',
          class: (spec.name === 'cancel' ? 'danger ' : 'secondary ') + spec.name,
          'data-action': spec.name,
          onclick: function () {
            act(row, spec);
          },
        },
        spec.label,
      );
      row.buttons[spec.name] = button;
      actions.appendChild(button);
    });
    var notSent = failuresBlock(row);
    row.card = el(
      'article',
      { class: 'card broadcast' },
      title,
      reason,
      meter,
      countLine,
      details,
      actions,
      notSent,
    );
    row.fill = function (b) {
      row.current = b;
      var card = row.card;
      card.setAttribute('data-bot', b.bot);
      card.setAttribute('data-id', b.id);
      card.setAttribute('data-status', b.status);
      ['total', 'sent', 'blocked', 'failed', 'pending'].forEach(function (name) {
        card.setAttribute('data-' + name, b[name]);
      });
      kit.replaceChildren(title, [
        document.createTextNode(b.bot),
        el('code', { class: 'id', title: b.id }, short(b.id)),
        el('span', { class: 'muted' }, b.method),
        el('span', { class: 'badge status ' + (STATUS_CLASS[b.status] || 'bad') }, b.status),
      ]);
      meter.setAttribute('aria-label', 'Progress of broadcast ' + short(b.id) + ' of ' + b.bot);
      meter.setAttribute('aria-valuemax', b.total);
      meter.setAttribute('aria-valuenow', settled(b));
      meter.setAttribute('aria-valuetext', countsText(b));
      drawBar(bar, b);
      kit.replaceChildren(countLine, [counts(b)]);
      // Only a dispatcher's pause has a reason, and the API drops it once resumed.
      reason.textContent = b.paused_reason || '';
      reason.hidden = !b.paused_reason;
      details.replaceWith((details = detailsOf(b)));
      ACTIONS.forEach(function (spec) {
        var button = row.buttons[spec.name];
        button.disabled = row.busy || spec.allowed.indexOf(b.status) < 0;
        button.setAttribute('aria-label', spec.label + ' broadcast ' + b.id + ' of ' + b.bot);
      });
      notSent.hidden = b.blocked + b.failed === 0;
    };
    row.fill(first);
    return row;
  }

  function detailsOf(b) {
    return fields([
      ['rate', b.rate + ' / s'],
      [
        'estimated finish',
        b.estimated_finish_at ? when(b.estimated_finish_at) : b.status === 'running' ? '–' : null,
      ],
      ['client', b.client],
      ['created', when(b.created_at)],
      ['started', when(b.started_at)],
      ['finished', when(b.finished_at)],
      ['id', b.id],
    ]);
  }

  function act(row, spec) {
    var b = row.current;
    if (
      spec.name === 'cancel' &&
      !confirm(
        'Cancel broadcast ' +
          b.id +
          ' of ' +
          b.bot +
          '? Its ' +
          b.pending +
          ' pending recipients will never be sent.',
      )
    )
      return;
    row.busy = true;
    row.after = ++ticks;
    row.fill(b);
    say(spec.label + '…');
    return api('POST', path(b) + '/' + spec.name)
      .then(function (updated) {
        row.busy = false;
        row.after = ++ticks;
        row.fill(updated);
        say(spec.done + ' broadcast ' + short(b.id) + ' of ' + b.bot + '.');
      })
      .catch(function (error) {
        row.busy = false;
        row.fill(row.current);
        fail(error);
        return refreshBroadcasts();
      });
  }

  /** "Recipients not sent": each reason's first page, loaded when opened. */
  function failuresBlock(row) {
    var lists = el('div');
    var block = el(
      'details',
      { class: 'not-sent' },
      el('summary', null, 'Recipients not sent'),
      lists,
    );
    block.addEventListener('toggle', function () {
      if (!block.open) return;
      lists.textContent = '';
      ['blocked', 'failed'].forEach(function (reason) {
        var list = el('ul', { class: 'failures', 'data-reason': reason });
        lists.appendChild(el('h4', null, reason));
        lists.appendChild(list);
        loadFailures(row.current, reason, list, 0);
      });
    });
    return block;
  }

  function loadFailures(b, reason, list, offset) {
    var query = '?reason=' + reason + '&limit=' + PAGE + '&offset=' + offset;
    return api('GET', path(b) + '/failures' + query)
      .then(function (page) {
        if (!page.total) list.appendChild(el('li', { class: 'muted' }, 'none'));
        page.items.forEach(function (item) {
          list.appendChild(
            el(
              'li',
              { 'data-chat': item.chat_id, 'data-error-code': item.error_code },
              'chat ' +
                item.chat_id +
                ': ' +
                (item.error_code ? item.error_code + ' ' : '') +
                item.description,
            ),
          );
        });
        if (page.next_offset === null) return;
        var more = el(
          'button',
          {
            type: 'button',
            class: 'link',
            'aria-label': 'More ' + reason + ' recipients',
            onclick: function () {
              more.parentNode.remove();
              loadFailures(b, reason, list, page.next_offset);
            },
          },
          'More (' + (page.total - page.next_offset) + ' left)',
        );
        list.appendChild(el('li', null, more));
      })
      .catch(fail);
  }

  function sameOrder(container, nodes) {
    if (container.children.length !== nodes.length) return false;
    for (var i = 0; i < nodes.length; i++) if (container.children[i] !== nodes[i]) return false;
    return nodes.length > 0;
  }

  function showRows(items, asked) {
    var seen = {};
    var nodes = items.map(function (b) {
      var key = b.bot + '/' + b.id;
      seen[key] = true;
      var row = rows[key];
      if (!row) row = rows[key] = createRow(b);
      else if (row.after < asked && !row.busy) row.fill(b);
      return row.card;
    });
    Object.keys(rows).forEach(function (key) {
      if (!seen[key]) delete rows[key];
    });
    var container = $('broadcasts');
    if (!sameOrder(container, nodes))
      kit.replaceChildren(container, nodes, 'No broadcasts in the last 7 days.');
  }

  function enablePager() {
    $('broadcasts-newer').disabled = shownFrom === 0;
    $('broadcasts-older').disabled = nextOffset === null;
  }

  function showPager(from, shown, next) {
    var beyond = next !== null && next > MAX_OFFSET;
    shownFrom = from;
    nextOffset = beyond ? null : next;
    $('broadcasts-pager').hidden = from === 0 && next === null;
    $('broadcasts-pager').setAttribute('data-offset', from);
    $('broadcasts-range').textContent = shown ? from + 1 + '–' + (from + shown) : '';
    $('broadcasts-end').hidden = !beyond;
    enablePager();
  }

  function refreshBroadcasts() {
    var asked = ++ticks;
    var from = offset;
    return api('GET', '/broadcasts?limit=' + LIMIT + '&offset=' + from)
      .then(function (page) {
        // The page was turned, or a later answer is shown already.
        if (from !== offset || asked < shownTick) return;
        shownTick = asked;
        // Broadcasts older than 7 days are dropped, so a back page can empty under the reader.
        if (!page.items.length && from > 0) return turnTo(Math.max(0, from - LIMIT));
        showRows(page.items, asked);
        showPager(from, page.items.length, page.next_offset);
      })
      .catch(fail);
  }

  function turnTo(to) {
    offset = to;
    return refreshBroadcasts();
  }

  /** A click: both buttons wait for the page, so a second click cannot skip one. */
  function turnPage(to) {
    $('broadcasts-newer').disabled = true;
    $('broadcasts-older').disabled = true;
    return turnTo(to).then(function () {
      // Refused or lost (the status line says which): the next refresh keeps the page shown.
      offset = shownFrom;
      enablePager();
      $('broadcasts-title').scrollIntoView({ block: 'nearest' });
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    $('broadcasts-newer').addEventListener('click', function () {
      turnPage(Math.max(0, shownFrom - LIMIT));
    });
    $('broadcasts-older').addEventListener('click', function () {
      if (nextOffset !== null) turnPage(nextOffset);
    });
  });

  kit.everyRefresh(function () {
    if (!$('app').hidden && !$('view-outbox').hidden) return refreshBroadcasts();
  });

  kit.refreshBroadcasts = refreshBroadcasts;
})();
