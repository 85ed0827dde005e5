// The Relaygram admin page: plain DOM code, no build step, no dependencies. Every value
// from the API is inserted as text (dead letters hold whatever Telegram users sent).
// admin-kit.js (the shared helpers), admin-bots.js (the bot cards) and the other tabs'
// scripts load before it.
(function () {
  'use strict';

  var kit = window.RelaygramAdmin;
  var TOKEN_KEY = kit.TOKEN_KEY;
  var $ = kit.$;
  var el = kit.el;
  var token = kit.token;
  var say = kit.say;
  var api = kit.api;
  var fail = kit.fail;
  var badge = kit.badge;
  var fields = kit.fields;
  var replaceChildren = kit.replaceChildren;
  var when = kit.when;
  var botCard = kit.botCard;
  var chartBlock = kit.chartBlock;
  var refreshCharts = kit.refreshCharts;

  var TABS = ['bots', 'routes', 'queue', 'outbox', 'trace'];

  var state = { tab: 'bots', cursor: null, filter: {} };

  // ---- sign in / out ----

  function showLogin(message) {
    $('app').hidden = true;
    $('sign-out').hidden = true;
    $('login').hidden = false;
    $('token').value = '';
    $('token').focus();
    say(message || '', Boolean(message));
  }

  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    showLogin(message);
  }

  function start() {
    return api('GET', '')
      .then(function (overview) {
        $('service').textContent = overview.service;
        fillSelect($('filter-route'), overview.routes);
        // Not configured, so not in the overview, yet its failed sends are dead letters too.
        $('filter-route').appendChild(
          el('option', { value: kit.OUTBOX_ROUTE }, kit.OUTBOX_ROUTE + ' (outbox sends)'),
        );
        fillSelect($('filter-bot'), overview.bots);
        fillSelect($('filter-reason'), overview.dead_reasons);
        kit.fillTraceBots(overview.bots);
        $('login').hidden = true;
        $('app').hidden = false;
        $('sign-out').hidden = false;
        say('');
        showTab(tabFromHash());
      })
      .catch(fail);
  }

  function fillSelect(select, values) {
    while (select.options.length > 1) select.remove(1);
    values.forEach(function (value) {
      select.appendChild(el('option', { value: value }, value));
    });
  }

  // ---- tabs ----

  function tabFromHash() {
    var name = location.hash.replace('#', '');
    return TABS.indexOf(name) >= 0 ? name : 'bots';
  }

  function showTab(name) {
    state.tab = name;
    TABS.forEach(function (tab) {
      $('tab-' + tab).setAttribute('aria-selected', String(tab === name));
      $('view-' + tab).hidden = tab !== name;
    });
    if (location.hash !== '#' + name) history.replaceState(null, '', '#' + name);
    load();
  }

  function load() {
    if (state.tab === 'bots') return loadBots();
    if (state.tab === 'routes') return loadRoutes();
    if (state.tab === 'trace') return kit.refreshTrace();
    if (state.tab === 'outbox') return kit.loadOutbox();
    return loadLetters(true);
  }

  // ---- bots ----

  function loadBots() {
    say('Loading bots…');
    return api('GET', '/bots')
      .then(function (data) {
        replaceChildren($('bots'), data.bots.map(botCard), 'No bots are configured.');
        say('');
        return refreshCharts();
      })
      .catch(fail);
  }

  // ---- routes ----

  function loadRoutes() {
    say('Loading routes…');
    return api('GET', '/routes')
      .then(function (data) {
        replaceChildren($('routes'), data.routes.map(routeCard), 'No routes are configured.');
        say('');
        return refreshCharts();
      })
      .catch(fail);
  }

  function routeCard(route) {
    return el(
      'article',
      { class: 'card route', 'data-name': route.name },
      el(
        'h3',
        null,
        route.name,
        el('span', { class: 'badge ' + (route.dead ? 'bad' : 'ok') }, route.dead + ' dead'),
      ),
      route.failing ? failingNote(route.failing) : null,
      route.last_error ? el('p', { class: 'problem' }, 'Last error: ' + route.last_error) : null,
      fields([
        ['target', route.target],
        ['bots', route.bots.join(', ')],
        ['ordering', route.ordering],
        ['queued', route.queue],
        ['lanes', route.lanes],
        ['delivered', route.delivered],
        ['dead letters', route.dead],
        ['went dead (total)', route.dead_total],
        ['last status', route.last_status],
        ['last error at', when(route.last_error_at)],
      ]),
      chartBlock('route', route.name),
      kit.attemptsBlock(route.name),
    );
  }

  /** Why the route fails: its last attempts all failed, since when, and the answer. */
  function failingNote(failing) {
    return el(
      'div',
      { class: 'failing', 'data-since': failing.since, 'data-status': failing.status },
      el(
        'p',
        { class: 'problem' },
        'Failing since ' +
          when(failing.since) +
          ': ' +
          failing.error +
          ' (' +
          failing.attempts +
          ' attempts in a row, last ' +
          when(failing.last_at) +
          ')',
      ),
      failing.body ? el('pre', { class: 'answer' }, failing.body) : null,
    );
  }

  // ---- dead letters ----

  function readFilter() {
    var filter = {};
    ['route', 'bot', 'reason'].forEach(function (name) {
      var value = $('filter-' + name).value;
      if (value) filter[name] = value;
    });
    return filter;
  }

  function query(params) {
    var parts = Object.keys(params)
      .filter(function (k) {
        return params[k] !== undefined && params[k] !== null && params[k] !== '';
      })
      .map(function (k) {
        return encodeURIComponent(k) + '=' + encodeURIComponent(params[k]);
      });
    return parts.length ? '?' + parts.join('&') : '';
  }

  function loadLetters(fresh) {
    if (fresh) {
      state.filter = readFilter();
      state.cursor = null;
    }
    var params = Object.assign({ limit: 50, cursor: state.cursor }, state.filter);
    say('Loading dead letters…');
    return api('GET', '/dead-letters' + query(params))
      .then(function (page) {
        var list = $('letters');
        var cards = page.items.map(letterCard);
        if (fresh) replaceChildren(list, cards, 'No dead letters match.');
        else
          cards.forEach(function (card) {
            list.appendChild(card);
          });
        state.cursor = page.next_cursor;
        $('more').hidden = !page.next_cursor;
        $('resend-all').disabled = !(state.filter.route || state.filter.bot);
        say('');
      })
      .catch(fail);
  }

  /** An outbox send's dead letter holds its Bot API call, not an update (its update_id is 0). */
  function letterSubject(letter) {
    var type = letter.update_type ? ' (' + letter.update_type + ')' : '';
    if (letter.route !== kit.OUTBOX_ROUTE) return ['update', letter.update_id + type];
    var call = letter.update && typeof letter.update === 'object' ? letter.update : {};
    var chat = call.params && typeof call.params === 'object' ? call.params.chat_id : undefined;
    return ['send', (call.method || '?') + (chat === undefined ? '' : ' to chat ' + chat)];
  }

  function letterCard(letter) {
    var card = el(
      'article',
      { class: 'card letter', 'data-id': letter.delivery_id },
      el(
        'h3',
        null,
        letter.route,
        el('span', { class: 'badge bad' }, letter.reason),
        el('span', { class: 'muted' }, letter.bot),
      ),
      fields([
        letterSubject(letter),
        ['attempts', letter.attempts],
        ['last status', letter.last_status],
        ['last error', letter.last_error],
        ['went dead', when(letter.dead_at)],
        ['accepted', when(letter.accepted_at)],
        ['delivery id', letter.delivery_id],
      ]),
      letter.last_body
        ? el('details', null, el('summary', null, 'Last answer'), el('pre', null, letter.last_body))
        : null,
      el(
        'details',
        null,
        el('summary', null, letter.route === kit.OUTBOX_ROUTE ? 'Call' : 'Update'),
        el('pre', null, JSON.stringify(letter.update, null, 2)),
      ),
    );
    var actions = el(
      'div',
      { class: 'actions' },
      el(
        'button',
        {
          type: 'button',
          class: 'resend',
          onclick: function (event) {
            act(
              event.target,
              'POST',
              '/dead-letters/' + encodeURIComponent(letter.delivery_id) + '/replay',
              card,
              'Re-sent',
            );
          },
        },
        'Re-send',
      ),
      el(
        'button',
        {
          type: 'button',
          class: 'danger delete',
          onclick: function (event) {
            if (confirm('Delete this dead letter? It cannot be re-sent afterwards.'))
              act(
                event.target,
                'DELETE',
                '/dead-letters/' + encodeURIComponent(letter.delivery_id),
                card,
                'Deleted',
              );
          },
        },
        'Delete',
      ),
    );
    card.appendChild(actions);
    return card;
  }

  function act(button, method, path, card, done) {
    button.disabled = true;
    return api(method, path)
      .then(function () {
        var message = done + ' ' + card.getAttribute('data-id') + '.';
        card.remove();
        if ($('letters').children.length) return say(message);
        // The page is empty now: load the next one, then tell what was done.
        return loadLetters(true).then(function () {
          say(message);
        });
      })
      .catch(function (error) {
        button.disabled = false;
        fail(error);
      });
  }

  function resendAll() {
    var filter = state.filter;
    if (!filter.route && !filter.bot) return say('Choose a route or a bot first.', true);
    var what = Object.keys(filter)
      .map(function (k) {
        return k + ' ' + filter[k];
      })
      .join(', ');
    if (!confirm('Re-send every dead letter of ' + what + '?')) return;
    say('Re-sending…');
    return api('POST', '/dead-letters/replay', filter)
      .then(function (result) {
        say(
          'Re-sent ' +
            result.queued +
            (result.failed ? ', ' + result.failed + ' could not be re-sent' : '') +
            '.',
        );
        return loadLetters(true);
      })
      .catch(fail);
  }

  // ---- wiring ----

  kit.onUnauthorized = signOut;

  document.addEventListener('DOMContentLoaded', function () {
    $('login-form').addEventListener('submit', function (event) {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $('token').value.trim());
      $('token').value = '';
      start();
    });
    $('sign-out').addEventListener('click', function () {
      signOut('Signed out.');
    });
    TABS.forEach(function (tab) {
      $('tab-' + tab).addEventListener('click', function () {
        showTab(tab);
      });
    });
    $('refresh').addEventListener('click', load);
    $('filters').addEventListener('submit', function (event) {
      event.preventDefault();
      loadLetters(true);
    });
    $('resend-all').addEventListener('click', resendAll);
    $('more').addEventListener('click', function () {
      loadLetters(false);
    });
    window.addEventListener('hashchange', function () {
      if (!$('app').hidden) showTab(tabFromHash());
    });
    if (token()) start();
    else showLogin();
  });
})();
