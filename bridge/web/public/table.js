// The web table: a person plays a session against bots. A bridge client like any other frontend:
// it speaks only the WebSocket protocol (bridge/protocol.ts): hello, env.create (single mode, the
// bots played on the server), env.reset, env.step, env.view (the public table of the player's
// seat) and env.record. Legality comes from the server: only the moves env.view lists are enabled.

import { CARD_NAMES, MAX_HANDS_PER_REPLY, MAX_SEED_LENGTH, PLAYERS, PROTOCOL_VERSION, cardLongName, cardShortName, suitDisplayName } from './shared.js';

const $ = (id) => document.getElementById(id);
const table = {
  ws: null,
  pending: [],
  session: null,
  numPlayers: 0,
  seat: 0,
  seatNames: [],
  deckStyle: 'german',
  view: null,
  busy: false,
  /** A start (connect, hello, create, reset) is under way: one at a time, and no moves meanwhile. */
  starting: false,
  /** Why the last connection went (shown by requests made after it), null while connected. */
  lostReason: null,
};

// ---------------------------------------------------------------- protocol

function connect() {
  const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`);
  table.ws = ws;
  table.lostReason = null;
  return new Promise((resolve, reject) => {
    // A server that takes the connection but never answers the handshake (a stopped process) left
    // Start disabled without a word: connecting gives up as a request does.
    const timer = setTimeout(() => {
      if (table.ws !== ws) return;
      table.ws = null;
      ws.close();
      reject(new Error(`the server has not answered for ${Math.round(replyTimeoutMs() / 1000)} s; press Restart to try again`));
    }, replyTimeoutMs());
    ws.onopen = () => (clearTimeout(timer), resolve());
    ws.onerror = () => (clearTimeout(timer), reject(new Error('cannot reach the bridge server')));
    ws.onclose = (e) => {
      // A socket the page has since replaced says nothing: its close is no news about the table.
      if (table.ws !== ws) return;
      for (const p of table.pending.splice(0)) p.reject(new Error(`connection closed (${e.code} ${e.reason})`));
      // Moves stay shown but disabled: a click could only fail, and its error hid the reason. No
      // turn is the player's any more (renderHand): the status said "your-turn", the prompt "play a card".
      renderMoves();
      document.body.dataset.status = 'disconnected';
      // An error shown just before (a refused hello: "wrong token") says why: keep it in front.
      const shown = $('status');
      const why = shown.className === 'error' && shown.textContent.startsWith('Error:') ? `${shown.textContent} ` : '';
      table.lostReason = `Disconnected from the server (${e.code}${e.reason ? `: ${e.reason}` : ''}). Press Restart to reconnect.`;
      setStatus(`${why}${table.lostReason}`, 'error');
    };
    // Replies arrive in request order, so pending requests are a queue.
    ws.onmessage = (e) => {
      const waiter = table.pending.shift();
      if (!waiter) return;
      const reply = JSON.parse(e.data);
      if (reply.error) waiter.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
      else waiter.resolve(reply.result);
    };
  });
}

let nextId = 1;
function call(method, params = {}) {
  return new Promise((resolve, reject) => {
    const ws = table.ws;
    // A Restart's requests after the server was given up said "Error: not connected" over the
    // reason (and the hint to press Restart).
    if (!ws || ws.readyState !== WebSocket.OPEN) return reject(new Error(table.lostReason ?? 'not connected'));
    const timer = setTimeout(() => giveUp(ws), replyTimeoutMs());
    const settled = (then) => (value) => (clearTimeout(timer), then(value));
    table.pending.push({ resolve: settled(resolve), reject: settled(reject) });
    ws.send(JSON.stringify({ id: nextId++, method, params }));
  });
}

/**
 * How long a request may wait for its reply: a server that stopped answering but kept the socket
 * open (a stopped process, a half-open connection) left the page saying "The bots are playing"
 * for good. Generous, as bots may search for seconds; a test may set `kratzenReplyTimeoutMs`.
 */
function replyTimeoutMs() {
  return globalThis.kratzenReplyTimeoutMs ?? 60_000;
}

/** Gives up the socket of a server that has not answered in time: its requests fail, the moves are disabled, Restart reconnects. */
function giveUp(ws) {
  if (table.ws !== ws) return;
  table.ws = null;
  const why = `The server has not answered for ${Math.round(replyTimeoutMs() / 1000)} s. Press Restart to reconnect.`;
  table.lostReason = why;
  for (const p of table.pending.splice(0)) p.reject(new Error(why));
  ws.close();
  renderMoves();
  setStatus(why, 'error');
}

// ---------------------------------------------------------------- names

// The names themselves are formatted by the shared module, with the terminal game's own code.
function deckStyle() {
  return Object.hasOwn(CARD_NAMES.styles, table.deckStyle) ? table.deckStyle : 'german';
}

function cardParts(token) {
  if (token === 'W') return { suit: CARD_NAMES.weliSuit, weli: true };
  return { suit: token[1], weli: false };
}

const cardName = (token) => cardLongName(token, deckStyle());
const suitName = (letter) => suitDisplayName(letter, deckStyle());
const cardLabel = (token) => cardShortName(token, deckStyle());

function seatName(seat) {
  return seat === table.seat ? 'You' : `Seat ${seat}`;
}

function chips(x) {
  const v = Math.round(x * 1e6) / 1e6;
  return `${v > 0 ? '+' : ''}${v}`;
}

const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k.startsWith('data-')) node.setAttribute(k, String(v));
    else if (k === 'onclick') node.addEventListener('click', v);
    else node[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
};

function cardElement(token, tag = 'span', attrs = {}) {
  const { suit, weli } = cardParts(token);
  return el(tag, { class: `card suit-${suit}${weli ? ' weli' : ''}`, title: cardName(token), 'data-card': token, ...attrs }, cardLabel(token));
}

// ---------------------------------------------------------------- rendering

function setStatus(text, kind = '') {
  const status = $('status');
  status.textContent = text;
  status.className = kind;
}

/** Whether the session shown has ended: played to its end, or stopped by an amount overflow. */
function isOver(t) {
  return t.complete || t.overflowed;
}

function render(t) {
  table.view = t;
  const v = t.view;
  $('hand-number').textContent = t.complete
    ? `${t.numHands} of ${t.numHands} (over)`
    : t.overflowed
      ? `${t.handIndex + 1} of ${t.numHands} (stopped)`
      : `${t.handIndex + 1} of ${t.numHands}${v.tieBreak ? ' (tie-break)' : ''}`;
  $('kind').textContent = v.kind;
  $('pot').textContent = `${v.pot} chips${v.phase === 'play' ? ` (at stake ${v.potBeforePlay})` : ''}`;
  $('face-up').replaceChildren(...v.faceUp.map((c) => cardElement(c)));
  $('trump').textContent = v.trump ? suitName(v.trump) : '—';
  renderSeats(t);
  renderTrick(t);
  renderHand(t);
  renderHistory(t);
}

function renderSeats(t) {
  const v = t.view;
  const seats = [];
  for (let s = 0; s < v.numPlayers; s++) {
    const played = v.currentTrick[s];
    const declaration = v.declarations[s] === 'none' ? (v.dealtIn[s] ? '' : 'not dealt in') : v.declarations[s];
    seats.push(
      el(
        'div',
        { class: `seat${s === v.toAct ? ' to-act' : ''}${s === table.seat ? ' me' : ''}`, 'data-seat': s },
        el('div', { class: 'seat-name' }, seatName(s), el('small', {}, ` ${table.seatNames[s] ?? ''}`), s === v.dealer ? el('span', { class: 'dealer', title: 'dealer' }, 'D') : null),
        el('div', { class: 'balance', 'data-value': v.balances[s] }, `${chips(v.balances[s])} chips`),
        el('div', { class: 'declaration' }, declaration || '\u00a0'),
        el('div', { class: 'tricks' }, v.dealtIn[s] ? `tricks ${v.tricksWon[s]}${v.quotas[s] ? ` / quota ${v.quotas[s]}` : ''}` : '\u00a0'),
        el('div', { class: 'seat-card' }, played ? cardElement(played) : null),
      ),
    );
  }
  $('seats').replaceChildren(...seats);
}

function currentHistory(t) {
  return t.history.find((h) => h.hand === t.handIndex);
}

function renderTrick(t) {
  const v = t.view;
  const hand = currentHistory(t);
  const trick = v.phase === 'play' && hand ? hand.tricks.find((x) => x.trick === v.trickNumber) : null;
  $('trick-number').textContent = v.phase === 'play' ? `${v.trickNumber + 1}` : '';
  const plays = trick ? trick.plays : [];
  $('trick').replaceChildren(
    ...(plays.length ? plays.map((p) => el('figure', {}, cardElement(p.card), el('figcaption', {}, seatName(p.seat)))) : [el('p', { class: 'muted' }, v.phase === 'play' ? 'No card yet' : `Phase: ${v.phase}`)]),
  );
}

const CALL_LABELS = { in: 'In (play)', out: 'Out (fold)', bettler: 'Bettler', done: 'Done exchanging' };

function renderHand(t) {
  const legal = new Map(t.legal.map((m) => [m.text, m.action]));
  const connected = table.ws !== null && table.ws.readyState === WebSocket.OPEN;
  const canAct = !table.busy && !table.starting && connected && t.legal.length > 0;
  const cardAction = (card) => legal.get(`play ${card}`) ?? legal.get(`discard ${card}`);
  $('hand').replaceChildren(
    ...t.view.hand.map((card) => {
      const action = cardAction(card);
      const enabled = canAct && action !== undefined;
      return cardElement(card, 'button', {
        type: 'button',
        disabled: !enabled,
        'data-action': action,
        onclick: enabled ? () => act(action) : undefined,
      });
    }),
  );
  const calls = t.legal.filter((m) => !m.text.startsWith('play ') && !m.text.startsWith('discard '));
  $('calls').replaceChildren(
    ...calls.map((m) =>
      el('button', { type: 'button', class: 'call', disabled: !canAct, 'data-action': m.action, onclick: () => act(m.action) }, m.text.startsWith('trump ') ? `Trump ${suitName(m.text.slice(6))}` : (CALL_LABELS[m.text] ?? m.text)),
    ),
  );
  let prompt = '';
  if (t.legal.some((m) => m.text.startsWith('discard '))) prompt = 'discard a card';
  else if (t.legal.some((m) => m.text.startsWith('play '))) prompt = 'play a card (legal cards are raised)';
  else if (calls.length) prompt = 'your call';
  else if (!isOver(t)) prompt = 'waiting…';
  // Without a connection no turn is the player's: a failed move's redraw after the server was
  // given up said "your-turn" and "play a card" again.
  // Nor while a restart is under way: the old table's "your-turn" stayed up while it waited.
  $('prompt').textContent = prompt && connected && !table.starting ? `— ${prompt}` : '';
  document.body.dataset.status = !connected ? 'disconnected' : table.starting ? 'starting' : table.busy ? 'busy' : isOver(t) ? 'over' : t.legal.length ? 'your-turn' : 'waiting';
}

/** The moves again, after the connection or a start changed whether they may be made. */
function renderMoves() {
  if (table.view) renderHand(table.view);
}

/** `Seat 2 plays K♣`, `You play K♣`. */
function describeAction(a) {
  const [verb, arg] = a.action.split(' ');
  const you = a.seat === table.seat;
  const v = (third, second) => (you ? second : third);
  let phrase = a.action;
  if (verb === 'play') phrase = `${v('plays', 'play')} ${cardLabel(arg)}`;
  else if (verb === 'discard') phrase = arg === '?' ? 'discards a card' : `${v('discards', 'discard')} ${cardLabel(arg)}`;
  else if (verb === 'trump') phrase = `${v('names', 'name')} trump ${suitName(arg)}`;
  else if (verb === 'bettler') phrase = `${v('plays', 'play')} Bettler`;
  else if (verb === 'in' || verb === 'out') phrase = `${v('is', 'are')} ${verb}`;
  else if (verb === 'done') phrase = `${v('is', 'are')} done exchanging`;
  return `${seatName(a.seat)} ${phrase}`;
}

function settlementTable(report, index) {
  const rows = report.balances.map((_, s) =>
    el(
      'tr',
      { 'data-seat': s },
      el('th', {}, seatName(s)),
      el('td', { class: 'in' }, report.in[s] ? 'in' : 'out'),
      el('td', { class: 'tricks-won', 'data-value': report.tricks[s] }, String(report.tricks[s])),
      el('td', { class: 'payout', 'data-value': report.payouts[s] }, chips(report.payouts[s])),
      el('td', { class: 'penalty', 'data-value': report.penalties[s] }, report.penalties[s] ? `−${report.penalties[s]}` : '0'),
      report.fees ? el('td', { class: 'fee', 'data-value': report.fees[s] }, String(report.fees[s])) : null,
      el('td', { class: 'balance', 'data-value': report.balances[s] }, chips(report.balances[s])),
    ),
  );
  return el(
    'div',
    { class: 'settlement-box' },
    el(
      'p',
      {},
      el('b', {}, `Settlement of hand ${index + 1}`),
      ` — ${report.kind}${report.walkover ? ' (walkover)' : ''}, trump ${suitName(report.trump)}, pot ${report.potBeforePlay} → `,
      el('span', { class: 'pot-after', 'data-value': report.potAfter }, String(report.potAfter)),
    ),
    el(
      'table',
      { class: 'settlement', 'data-hand': index },
      el('thead', {}, el('tr', {}, el('th', {}, ''), el('th', {}, ''), el('th', {}, 'tricks'), el('th', {}, 'payout'), el('th', {}, 'penalty'), report.fees ? el('th', {}, 'fees') : null, el('th', {}, 'balance'))),
      el('tbody', {}, ...rows),
    ),
  );
}

function renderHistory(t) {
  const blocks = [];
  for (const hand of t.history) {
    const items = [];
    const calls = hand.actions.filter((a) => !a.action.startsWith('play '));
    if (calls.length) items.push(el('li', { class: 'calls-line' }, calls.map(describeAction).join(' · ')));
    for (const trick of hand.tricks) {
      items.push(
        el(
          'li',
          { class: 'trick-line', 'data-trick': trick.trick },
          `Trick ${trick.trick + 1}: `,
          ...trick.plays.flatMap((p, i) => [i ? ', ' : '', cardElement(p.card), ` ${seatName(p.seat)}`]),
          trick.winner >= 0 ? el('b', {}, ` → ${seatName(trick.winner)}`) : ' …',
        ),
      );
    }
    const report = t.settlements[hand.hand];
    blocks.push(el('section', { class: 'hand-log', 'data-hand': hand.hand }, el('h3', {}, `Hand ${hand.hand + 1} · dealer ${seatName(hand.dealer)}`), el('ul', {}, ...items), report ? settlementTable(report, hand.hand) : null));
  }
  // A finished hand without any action (a walkover) still has its settlement.
  t.settlements.forEach((report, h) => {
    if (!t.history.some((x) => x.hand === h)) blocks.push(el('section', { class: 'hand-log', 'data-hand': h }, el('h3', {}, `Hand ${h + 1}`), settlementTable(report, h)));
  });
  blocks.sort((a, b) => Number(a.dataset.hand) - Number(b.dataset.hand));
  if (isOver(t)) {
    const f = t.final;
    blocks.push(
      el(
        'section',
        { class: 'final' },
        el('h3', {}, 'Final standings'),
        el('ol', {}, ...f.balances.map((b, s) => ({ b, s })).sort((x, y) => y.b - x.b).map(({ b, s }) => el('li', { 'data-seat': s }, `${seatName(s)}: ${chips(b)} chips${f.winners?.includes(s) ? ' — winner' : ''}`))),
        el('p', {}, `Left in the pot: ${f.pot}`),
      ),
    );
  }
  const box = $('history');
  box.replaceChildren(...blocks);
  // The panel around it is what scrolls (table.css, .log): scrolling the list itself did nothing,
  // and the newest hand stayed below the panel's edge.
  const panel = box.closest('.log') ?? box;
  panel.scrollTop = panel.scrollHeight;
}

// ---------------------------------------------------------------- play

async function refresh(episode = 'current') {
  const t = await call('env.view', { session: table.session, episode });
  render(t);
  return t;
}

async function act(action) {
  if (table.busy) return;
  table.busy = true;
  renderHand(table.view);
  setStatus('The bots are playing…');
  // Restart during the bots' moves closes this session: the step's answer (or its "no session"
  // error, which flashed up before the new table) is news of a table no longer shown.
  const session = table.session;
  const settledBefore = table.view?.settlements.length ?? 0;
  try {
    const step = await call('env.step', { session, actions: [action] });
    table.busy = false;
    if (table.session !== session || table.starting) return;
    // The env resets itself when the session ends: the finished one is read as episode "ended".
    const ended = step.final.length > 0;
    const t = await refresh(ended ? 'ended' : 'current');
    if (table.session !== session || table.starting) return;
    if (ended) await showOver(t);
    else {
      setStatus(`${handOverNote(t, settledBefore)}${t.legal.length ? 'Your turn.' : 'Waiting.'}`);
      focusFirstMove();
    }
  } catch (e) {
    table.busy = false;
    if (table.session !== session || table.starting) return;
    renderMoves();
    // A connection that closed under the move has said so, and how to reconnect: keep that.
    if (table.ws?.readyState === WebSocket.OPEN) setStatus(`Error: ${e.message}`, 'error');
  }
}

/**
 * What the status says of hands settled during the last step: the table went straight on to the
 * next hand, its settlement only in the History panel (far below on a small screen).
 */
function handOverNote(t, settledBefore) {
  if (t.settlements.length <= settledBefore) return '';
  const last = t.settlements.length - 1;
  const report = t.settlements[last];
  const took = report.in[table.seat] ? `took ${report.tricks[table.seat]} trick${report.tricks[table.seat] === 1 ? '' : 's'}` : 'were out';
  const balance = `your balance is ${chips(report.balances[table.seat])} chips`;
  if (last === settledBefore) return `Hand ${last + 1} is over: you ${took}, ${balance} (its settlement is under History). `;
  // A step can settle several hands (a walkover, or hands played out without the player): the
  // note spoke of the last alone, as if the hands before it had not happened.
  return `Hands ${settledBefore + 1} to ${last + 1} are over: in hand ${last + 1} you ${took}, ${balance} (their settlements are under History). `;
}

/**
 * Keyboard focus after a move: the hand and the calls are rebuilt, which left it on the page's
 * body (a screen reader lost its place). It goes to the first move now enabled, else the status.
 */
function focusFirstMove() {
  const move = document.querySelector('#hand button:not([disabled]), #calls button:not([disabled])');
  if (move) move.focus();
  else $('status').focus();
}

async function showOver(t) {
  const f = t.final;
  const me = f.balances[table.seat];
  const result = `You ${me >= 0 ? 'won' : 'lost'} ${Math.abs(me)} chips${f.winners?.includes(table.seat) ? ' and are a winner' : ''}.`;
  // A session stopped by an amount overflow ended without a word of why, hands short of its end.
  const why = t.overflowed ? ` Stopped at hand ${t.handIndex + 1} of ${t.numHands}: an amount would pass the exact bound (2^53 − 1 units), and the rules stop a session there rather than round (rules §3).` : '';
  $('over-text').textContent = `Session over.${why} ${result}`;
  const { record } = await call('env.record', { session: table.session, episode: 'ended' });
  const link = $('download-record');
  if (link.href.startsWith('blob:')) URL.revokeObjectURL(link.href);
  link.href = URL.createObjectURL(new Blob([JSON.stringify(record, null, 2)], { type: 'application/json' }));
  $('over').hidden = false;
  setStatus('Session over.');
  // Focus went to the status line, eight Tabs through the setup form away from Next session.
  $('next-session').focus();
}

async function start(form) {
  const data = new FormData(form);
  table.deckStyle = data.get('deckStyle');
  // Agents are separated by commas, so a checkpoint folder whose name holds one cannot be named
  // here (the field's title says so).
  const opponents = String(data.get('opponents')).split(',').map((s) => s.trim()).filter(Boolean);
  if (!opponents.length) opponents.push('heuristic');
  const players = Number(data.get('players'));
  // The opponents are laid out by seat before the server reads the rules: an odd count was
  // reported as a problem of the opponents.
  if (!(Number.isInteger(players) && players >= PLAYERS.min && players <= PLAYERS.max)) {
    throw new Error(`players must be ${PLAYERS.min} to ${PLAYERS.max}, got "${String(data.get('players')).slice(0, 20)}"`);
  }
  const moreRules = parseMoreRules(String(data.get('rules') ?? ''));
  const seedText = String(data.get('seed')).trim();
  // A seed of a megabyte (from a link) was sent anyway, and the server dropped the connection.
  if (seedText.length > MAX_SEED_LENGTH) throw new Error(`the seed may hold at most ${MAX_SEED_LENGTH} characters, got ${seedText.length}`);
  // Sent as typed: the server seeds "7" as 7, and a Number past 2^53 was refused (or rounded).
  // Empty (the default) sends none: the server deals at random, so a restart or a second player
  // does not get the deals just seen (a default seed of 1 dealt every table alike).
  const seed = seedText || undefined;
  table.seat = 0;
  // Opponents are cycled over the other seats (the learner's entry is ignored by the server).
  const perSeat = Array.from({ length: players }, (_, s) => (s === table.seat ? null : opponents[(s - 1) % opponents.length]));
  table.seatNames = perSeat.map((spec) => (spec ? `· ${spec.length > 24 ? `…${spec.slice(-22)}` : spec}` : ''));
  if (table.session) await call('env.close', { session: table.session }).catch(() => undefined);
  // The old table goes with its session: a refused create left it on screen, its moves enabled
  // and failing ("no session").
  table.session = null;
  table.view = null;
  $('table').hidden = true;
  $('over').hidden = true;
  const created = await call('env.create', {
    mode: 'single',
    numEnvs: 1,
    learnerSeat: table.seat,
    opponents: perSeat,
    // The deck style goes with the rules: the downloaded record keeps it (docs/rules.md §0).
    config: { rules: { ...moreRules, profile: data.get('profile'), players, deckStyle: deckStyle() }, episode: 'session' },
  });
  table.session = created.session;
  table.numPlayers = created.numPlayers;
  await call('env.reset', { session: table.session, seed });
  $('table').hidden = false;
  $('over').hidden = true;
  const t = await refresh();
  setStatus(t.legal.length ? 'Your turn.' : 'Waiting.');
}

/**
 * The "More rules" field: further fields of the rule set as a JSON object (the tavern5 variants
 * could not be played from the page). The server checks them, naming a bad field; the ones the
 * form sets itself are refused here, so the form's choice is never silently overridden.
 */
function parseMoreRules(text) {
  if (text.trim() === '') return {};
  let rules;
  try {
    rules = JSON.parse(text);
  } catch {
    throw new Error(`More rules must be a JSON object, such as {"exchange": {}, "hands": 8}; got ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`);
  }
  if (rules === null || typeof rules !== 'object' || Array.isArray(rules)) throw new Error('More rules must be a JSON object, such as {"exchange": {}, "hands": 8}');
  const own = ['profile', 'players', 'deckStyle'].filter((key) => Object.hasOwn(rules, key));
  if (own.length) throw new Error(`More rules sets ${own.join(', ')}: choose ${own.length > 1 ? 'them' : 'it'} in the form instead`);
  // The page reads a session's history in one reply: past it, hands went unshown and unrecorded.
  if (typeof rules.hands === 'number' && rules.hands > MAX_HANDS_PER_REPLY) throw new Error(`the web table plays at most ${MAX_HANDS_PER_REPLY} hands a session, got hands ${rules.hands}`);
  return rules;
}

/**
 * The values of each key of a fragment's `key=value` pairs, percent-decoded but with `+` kept (a
 * base64 token holds `+`, which form decoding would turn into a space); its parts without a
 * value (`#players`); and the fragment's other parts, as written.
 */
function fragmentParams(hash) {
  const values = new Map();
  const bare = [];
  const kept = [];
  for (const part of hash.replace(/^#/, '').split('&')) {
    if (part === '') continue;
    const at = part.indexOf('=');
    const key = at < 0 ? part : part.slice(0, at);
    if (at >= 0) values.set(key, [...(values.get(key) ?? []), decodeLoosely(part.slice(at + 1))]);
    else bare.push(part);
    if (key !== 'token') kept.push(part);
  }
  return { values, bare, withoutToken: kept.join('&') };
}

function decodeLoosely(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Fills the form from the address's settings (the query, or the fragment: `#token=...` never
 * reaches a server or a Referer) and takes a token out of the address bar, so it stays out of the
 * history. Returns what the page should say of settings it could not take ('' when none). Run at
 * load and when only the fragment changes (a pasted `#token=...` link reloads nothing: its token
 * stayed in the address bar, unused).
 */
function applyAddressSettings(form, fragmentOnly = false) {
  const query = new URLSearchParams(location.search);
  const fragment = fragmentParams(location.hash);
  // After a change of the fragment alone, the query's settings (applied at load) stay as the
  // player has since chosen them.
  const settingsQuery = fragmentOnly ? new URLSearchParams() : query;
  const unknown = [];
  const conflicting = [];
  const short = (text) => (text.length > 40 ? `${text.slice(0, 40)}…` : text);
  for (const key of SETTINGS) {
    // Given twice with other values (`?players=4&players=7`), the first was taken without a word:
    // none is, and the page says so (never showing a token's values).
    const given = [...new Set([...settingsQuery.getAll(key), ...(fragment.values.get(key) ?? [])])];
    const field = form.elements[key];
    if (given.length === 0 || !field) continue;
    if (given.length > 1) {
      conflicting.push(key === 'token' ? `${given.length} different tokens` : `${key} ${given.map((v) => `"${short(v)}"`).join(' and ')}`);
      continue;
    }
    const value = given[0];
    const before = field.value;
    field.value = value;
    // A select takes only its own options: any other value would leave it empty (and send null).
    if (field.value !== value) {
      field.value = before;
      unknown.push(`${key} "${short(value)}"`);
    }
  }
  if (query.has('token') || fragment.values.has('token')) {
    query.delete('token');
    const search = query.toString();
    history.replaceState(null, '', `${location.pathname}${search ? `?${search}` : ''}${fragment.withoutToken ? `#${fragment.withoutToken}` : ''}`);
  }
  // A misspelt setting (`?opponent=pimc`, `#Players=3`) fell back to the default without a word.
  const named = [...new Set([...settingsQuery.keys(), ...fragment.values.keys()])].filter((key) => !SETTINGS.includes(key));
  // `#token=...&players` gave players no value, and nothing said so.
  const valueless = fragment.bare.filter((part) => SETTINGS.includes(part));
  const notices = [];
  if (unknown.length) notices.push(`The address asks for ${unknown.join(' and ')}, which this table does not offer: choose below.`);
  if (conflicting.length) notices.push(`The address gives ${conflicting.join('; ')}: one value each, please; choose below.`);
  if (valueless.length) notices.push(`The address names ${valueless.map((key) => `"${short(key)}"`).join(', ')} without a value (${short(valueless[0])}=...): choose below.`);
  if (named.length) notices.push(`The address names ${named.map((key) => `"${short(key)}"`).join(', ')}, no setting of this table (they are ${SETTINGS.join(', ')}).`);
  return notices.join(' ');
}

const SETTINGS = ['opponents', 'profile', 'players', 'seed', 'deckStyle', 'rules', 'token'];

async function main() {
  const form = $('setup');
  const notices = applyAddressSettings(form);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    // One start at a time: submits in one task (a script's requestSubmit) each opened a socket or
    // a session before the button was disabled.
    if (table.starting) return;
    table.starting = true;
    let started = false;
    renderMoves();
    $('start').disabled = true;
    try {
      setStatus(table.session ? 'Starting a new session…' : 'Starting…');
      if (!table.ws || table.ws.readyState !== WebSocket.OPEN) {
        setStatus('Connecting…');
        await connect();
        const token = String(new FormData(form).get('token') || '');
        const hello = await call('hello', token ? { protocolVersion: PROTOCOL_VERSION, token } : { protocolVersion: PROTOCOL_VERSION });
        // The server closes connections without requests for its idle timeout (hello says how
        // long: 10 minutes by default); a person thinking that long keeps the table with a ping
        // a minute, or three times within a shorter timeout (a fixed minute lost the game of a
        // player thinking on a server run with --idle-timeout-ms 30000).
        const idle = hello?.limits?.idleTimeoutMs;
        const every = Number.isFinite(idle) && idle > 0 ? Math.max(1000, Math.min(60_000, idle / 3)) : 60_000;
        const ws = table.ws;
        const keepAlive = setInterval(() => (ws.readyState === WebSocket.OPEN ? call('ping').catch(() => undefined) : clearInterval(keepAlive)), every);
      }
      await start(form);
      started = true;
    } catch (err) {
      setStatus(`Error: ${err.message}`, 'error');
    } finally {
      table.starting = false;
      renderMoves();
      $('start').disabled = false;
      $('start').textContent = 'Restart';
    }
    // Start was disabled while starting, which left keyboard focus on the page's body.
    if (started) focusFirstMove();
  });
  $('next-session').addEventListener('click', async () => {
    $('over').hidden = true;
    try {
      const t = await refresh('current');
      setStatus(t.legal.length ? 'Your turn.' : 'Waiting.');
      // The button just hidden held the focus: it fell to the page's body.
      focusFirstMove();
    } catch (err) {
      setStatus(`Error: ${err.message}`, 'error');
    }
  });
  // The server closes a session with its connection: a reload or a closed tab mid-session lost
  // the game without a question.
  window.addEventListener('beforeunload', (e) => {
    if (!table.session || !table.view || isOver(table.view) || !$('over').hidden) return;
    e.preventDefault();
    e.returnValue = '';
  });
  document.body.dataset.status = 'setup';
  if (notices) setStatus(notices, 'error');
  else setStatus('Choose the table and start a session.');
  window.addEventListener('hashchange', () => {
    const said = applyAddressSettings(form, true);
    if (said) setStatus(said, 'error');
    // Mid-game the status says whose turn it is (or why the connection went): it stays.
    else if (!table.session) setStatus("The address's settings are filled in below: Start plays them.");
  });
  // For scripts and tests: the same protocol calls the page makes.
  window.kratzenTable = { call, get session() { return table.session; }, get view() { return table.view; }, record: (episode = 'current') => call('env.record', { session: table.session, episode }) };
}

main();
