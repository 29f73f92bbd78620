--------------------------- MODULE BoundedBuffer ----------------------------
(***************************************************************************)
(* A producer and a consumer communicating through a first-in first-out   *)
(* buffer of bounded size.  The producer appends the next number of a     *)
(* cyclic counter to the end of the buffer when there is room; the        *)
(* consumer removes the element at the head when the buffer is non-empty. *)
(* The consumer checks that it receives the numbers in exactly the order  *)
(* in which they were produced.  The counter wraps around after a fixed   *)
(* number of values so that the state space stays finite.                 *)
(***************************************************************************)
EXTENDS Naturals, Sequences

CONSTANTS BufSize,  \* capacity of the buffer
          Values    \* the counter counts modulo Values

VARIABLES buf,      \* the buffer contents, oldest first
          sent,     \* the next value the producer will send
          expect    \* the next value the consumer expects to receive

vars == <<buf, sent, expect>>

TypeOK == /\ buf \in Seq(0..(Values - 1))
          /\ Len(buf) <= BufSize
          /\ sent \in 0..(Values - 1)
          /\ expect \in 0..(Values - 1)

Init == /\ buf = <<>>
        /\ sent = 0
        /\ expect = 0

(* The producer appends a value when there is room.                       *)
Produce == /\ Len(buf) < BufSize
           /\ buf' = Append(buf, sent)
           /\ sent' = (sent + 1) % Values
           /\ UNCHANGED expect

(* The consumer takes the oldest value off the buffer.                    *)
Consume == /\ buf # <<>>
           /\ buf' = Tail(buf)
           /\ expect' = (expect + 1) % Values
           /\ UNCHANGED sent

Next == Produce \/ Consume

Spec == Init /\ [][Next]_vars /\ WF_vars(Next)

(* Values are received in order: the head is always the expected value.   *)
InOrder == buf # <<>> => Head(buf) = expect

(* What is in the buffer accounts exactly for the gap between the         *)
(* producer's and the consumer's counters.                                 *)
NoLoss == (expect + Len(buf)) % Values = sent

(* The buffer is drained infinitely often or it keeps moving.             *)
KeepsMoving == []<><<Next>>_vars
=============================================================================
