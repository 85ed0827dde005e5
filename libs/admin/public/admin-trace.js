// The delivery log on the page: the Find update tab (an update's fan-out, each
// delivery's state and every attempt) and the routes' "Recent attempts". Answers are
// whatever a target sent back: inserted as text, never as HTML. Values a reader (or a
// test) needs are in data-* attributes too. Needs admin-kit.js.
(function () {
  'use strict';

  var kit = window.RelaygramAdmin;
  var $ = kit.$;
  var el = kit.el;
  var say = kit.say;
  var api = kit.api;
  var fail = kit.fail;

  var PAGE = 20;

  function time(iso) {
    return iso ? new Date(iso).toLocaleString() : '';
  }

  function statusText(attempt) {
    if (attempt.status !== null && attempt.status !== undefined) return String(attempt.status);
    return attempt.error || '–';
  }

  function statusClass(attempt) {
    if (attempt.outcome === 'delivered') return 'ok';
    return attempt.outcome === 'dead' ? 'bad' : 'warn';
  }

  function answer(body) {
    return body ? el('code', { class: 'answer' }, body) : el('span', { class: 'muted' }, '–');
  }

  /** One attempt as a table row; `withUpdate` for a route's list (mixed updates). */
  function attemptRow(attempt, withUpdate) {
    return el(
      'tr',
      {
        class: 'attempt',
        'data-id': attempt.id,
        'data-attempt': attempt.attempt,
        'data-outcome': attempt.outcome,
        'data-status': attempt.status === null ? '' : attempt.status,
        'data-error': attempt.error || '',
        'data-update-id': attempt.update_id,
        'data-duration-ms': attempt.duration_ms,
      },
      el('td', null, time(attempt.at)),
      withUpdate ? el('td', null, attempt.bot + ' ' + attempt.update_id) : null,
      el('td', null, '#' + attempt.attempt),
      el('td', null, el('span', { class: 'badge ' + statusClass(attempt) }, attempt.outcome)),
      el('td', { class: 'status' }, statusText(attempt)),
      el('td', { class: 'num' }, attempt.duration_ms + ' ms'),
      el('td', null, answer(attempt.body)),
    );
  }

  function attemptTable(withUpdate) {
    var titles = ['time'].concat(withUpdate ? ['update'] : [], [
      'attempt',
      'outcome',
      'status',
      'duration',
      'answer (first bytes)',
    ]);
    var head = el('tr');
    titles.forEach(function (title) {
      head.appendChild(el('th', null, title));
    });
    // Scrolls sideways on its own on a narrow screen; the page does not.
    return el(
      'div',
      { class: 'scroll' },
      el('table', { class: 'attempts' }, el('thead', null, head), el('tbody')),
    );
  }

  // ---- Find update ----

  function fillBots(bots) {
    var select = $('trace-bot');
    select.textContent = '';
    bots.forEach(function (bot) {
      select.appendChild(el('option', { value: bot }, bot));
    });
  }

  function stateLine(delivery) {
    if (delivery.state === 'retrying' && delivery.next_attempt_at)
      return 'retrying, next attempt ' + time(delivery.next_attempt_at);
    return delivery.state;
  }

  function deliveryBlock(delivery) {
    var table = attemptTable(false);
    var body = table.querySelector('tbody');
    delivery.attempts.forEach(function (attempt) {
      body.appendChild(attemptRow(attempt, false));
    });
    return el(
      'section',
      {
        class: 'delivery',
        'data-route': delivery.route,
        'data-state': delivery.state,
        'data-delivery-id': delivery.delivery_id,
        'data-next-attempt-at': delivery.next_attempt_at || '',
      },
      el('h4', null, delivery.route, ' ', el('span', { class: 'state' }, stateLine(delivery))),
      delivery.attempts.length ? table : el('p', { class: 'empty' }, 'No attempt yet.'),
      el('p', { class: 'muted' }, 'delivery ' + delivery.delivery_id),
    );
  }

  function fanOut(trace) {
    if (trace.status === 'ignored') return 'Ignored: no route matched it.';
    if (trace.status === 'duplicate')
      return 'Dropped as a duplicate; its first arrival has left the log.';
    return 'Queued for ' + trace.deliveries.length + ' route(s).';
  }

  function traceCard(trace) {
    return el(
      'article',
      {
        class: 'card trace',
        'data-bot': trace.bot,
        'data-update-id': trace.update_id,
        'data-status': trace.status,
      },
      el('h3', null, 'Update ' + trace.update_id, el('span', { class: 'muted' }, trace.bot)),
      el('p', null, 'Received ' + time(trace.received_at) + '. ' + fanOut(trace)),
      trace.duplicates_at.length
        ? el(
            'p',
            { class: 'muted' },
            'Received again (dropped): ' + trace.duplicates_at.map(time).join(', '),
          )
        : null,
    );
  }

  function findUpdate() {
    var bot = $('trace-bot').value;
    var id = $('trace-update').value.trim();
    var out = $('trace');
    if (!bot) return say('No bots are configured.', true);
    if (!/^\d+$/.test(id)) return say('An update_id is a whole number.', true);
    say('Looking up update ' + id + '…');
    return api('GET', '/updates/' + encodeURIComponent(bot) + '/' + id)
      .then(function (trace) {
        var card = traceCard(trace);
        trace.deliveries.forEach(function (delivery) {
          card.appendChild(deliveryBlock(delivery));
        });
        out.textContent = '';
        out.appendChild(card);
        say('');
      })
      .catch(function (error) {
        if (error.status !== 404) return fail(error);
        out.textContent = '';
        out.appendChild(
          el(
            'p',
            { class: 'empty missing', 'data-bot': bot, 'data-update-id': id },
            // The API says what the log keeps (or that it is off).
            error.message || 'Update ' + id + ' of ' + bot + ' is not in the delivery log.',
          ),
        );
        say('');
      });
  }

  // ---- a route's recent attempts ----

  function loadAttempts(block, older) {
    var route = block.getAttribute('data-route');
    var failed = block.querySelector('input.failed-only').checked;
    var cursor = older ? block.getAttribute('data-cursor') : '';
    var path =
      '/routes/' +
      encodeURIComponent(route) +
      '/attempts?limit=' +
      PAGE +
      (failed ? '&status=failed' : '') +
      (cursor ? '&cursor=' + encodeURIComponent(cursor) : '');
    return api('GET', path)
      .then(function (page) {
        var body = block.querySelector('tbody');
        if (!older) body.textContent = '';
        page.items.forEach(function (attempt) {
          body.appendChild(attemptRow(attempt, true));
        });
        block.setAttribute('data-cursor', page.next_cursor || '');
        block.setAttribute('data-loaded', 'true');
        block.querySelector('button.older').hidden = !page.next_cursor;
        block.querySelector('.empty').hidden = body.children.length > 0;
      })
      .catch(fail);
  }

  /** A route card's "Recent attempts": loaded when opened, newest first. */
  function attemptsBlock(route) {
    var block = el(
      'details',
      { class: 'recent-attempts', 'data-route': route },
      el('summary', null, 'Recent attempts'),
      el(
        'label',
        { class: 'toggle' },
        el('input', { type: 'checkbox', class: 'failed-only' }),
        ' failed only',
      ),
      attemptTable(true),
      el('p', { class: 'empty', hidden: true }, 'No attempts in the log.'),
      el('button', { type: 'button', class: 'secondary older', hidden: true }, 'Older'),
    );
    block.addEventListener('toggle', function () {
      if (block.open) loadAttempts(block, false);
    });
    block.querySelector('input.failed-only').addEventListener('change', function () {
      loadAttempts(block, false);
    });
    block.querySelector('button.older').addEventListener('click', function () {
      loadAttempts(block, true);
    });
    return block;
  }

  document.addEventListener('DOMContentLoaded', function () {
    $('trace-form').addEventListener('submit', function (event) {
      event.preventDefault();
      findUpdate();
    });
  });

  /** The tab's Refresh: the update shown (or asked for) again, its states as they are now. */
  kit.refreshTrace = function () {
    return $('trace-update').value.trim() ? findUpdate() : undefined;
  };
  kit.fillTraceBots = fillBots;
  kit.attemptsBlock = attemptsBlock;
})();
